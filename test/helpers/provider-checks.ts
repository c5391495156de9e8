/**
 * Request checks for the services that publish no machine-readable spec the
 * channel uses, written from their own documentation and source: signal-cli's
 * JSON-RPC daemon, a BlueBubbles server, and the OAuth 2.0 client-credentials
 * grant of Microsoft Entra (the token a Teams bot sends with). Each returns
 * what is wrong with a recorded request, like the validators of
 * provider-specs.ts, so a stand-in can take it as `validate`.
 */
import type { StubRequest, Validate } from './provider-stub.ts';

/**
 * A `send` call as signal-cli's JSON-RPC daemon takes it (man page
 * signal-cli-jsonrpc(5), `send` options in camelCase): POST /api/v1/rpc with
 * content-type application/json (else 415), a JSON-RPC 2.0 request with an
 * id, `account`, exactly one of `recipient` (a list) or `groupId`, and `message`.
 */
export function signalRpcCheck(req: StubRequest): string[] {
  const out: string[] = [];
  if (req.method !== 'POST' || req.path !== '/api/v1/rpc') return [`signal-cli's daemon has no ${req.method} ${req.path}`];
  if (req.contentType !== 'application/json') out.push(`content-type "${req.contentType}" is answered 415`);
  const b = req.body ?? {};
  if (b.jsonrpc !== '2.0') out.push('jsonrpc must be "2.0"');
  if (b.method !== 'send') out.push(`method is ${JSON.stringify(b.method)}`);
  if (typeof b.id !== 'string' && typeof b.id !== 'number') out.push('a request without an id is a notification, answered with no result');
  for (const k of Object.keys(b))
    if (!['jsonrpc', 'method', 'params', 'id'].includes(k)) out.push(`"${k}" is not a JSON-RPC request member`);
  const p = b.params ?? {};
  if (typeof p.account !== 'string') out.push('params.account is required by the multi-account daemon');
  if (typeof p.message !== 'string') out.push('params.message must be a string');
  const recipients = Array.isArray(p.recipient) && p.recipient.every((r: unknown) => typeof r === 'string');
  if (recipients === (typeof p.groupId === 'string')) out.push('exactly one of params.recipient (a list) or params.groupId');
  for (const k of Object.keys(p))
    if (!['account', 'recipient', 'groupId', 'message'].includes(k)) out.push(`params.${k} is not a send option we mean to use`);
  return out;
}

/**
 * What BlueBubbles' route, auth middleware and `validateText` accept for
 * `POST /api/v1/message/text` (test/fixtures/specs/imessage/SOURCE.md), with
 * the server's password.
 */
export function blueBubblesCheck(password: string): Validate {
  const rules: Record<string, (v: unknown) => boolean> = {
    chatGuid: (v) => typeof v === 'string' && v !== '',
    tempGuid: (v) => typeof v === 'string',
    message: (v) => typeof v === 'string',
    method: (v) => v === 'apple-script' || v === 'private-api',
  };
  return (req) => {
    const out: string[] = [];
    if (req.method !== 'POST' || req.path !== '/api/v1/message/text') return [`BlueBubbles has no ${req.method} ${req.path}`];
    if (req.query.password !== password)
      out.push('the server password must be the "password" query parameter (401 "Missing server password!")');
    for (const k of Object.keys(req.query)) if (!['password', 'guid', 'token'].includes(k)) out.push(`query parameter "${k}" is unknown`);
    if (req.contentType !== 'application/json') out.push(`content-type "${req.contentType}"`);
    const b = req.body ?? {};
    for (const [k, ok] of Object.entries(rules)) if (b[k] !== undefined && !ok(b[k])) out.push(`${k} is invalid: ${JSON.stringify(b[k])}`);
    if (b.chatGuid === undefined) out.push('chatGuid is required');
    if (b.message === undefined) out.push('message must be present');
    if ((b.method ?? 'apple-script') === 'apple-script') {
      if (!b.tempGuid) out.push("A 'tempGuid' is required when sending via AppleScript");
      if (!b.message) out.push("A 'message' is required when sending via AppleScript");
    }
    for (const k of Object.keys(b)) if (!(k in rules)) out.push(`"${k}" is not a field we mean to send`);
    return out;
  };
}

/** The client-credentials grant as RFC 6749 §4.4 and Entra's v2 endpoint take it, for a Bot Connector token. */
export function clientCredentialsCheck(appId: string, appPassword: string): Validate {
  const want = {
    grant_type: 'client_credentials',
    client_id: appId,
    client_secret: appPassword,
    scope: 'https://api.botframework.com/.default',
  };
  return (req) => {
    const out: string[] = [];
    if (req.method !== 'POST') out.push(`token request must be POST, not ${req.method}`);
    if (req.contentType !== 'application/x-www-form-urlencoded') out.push(`token request must be a form, not "${req.contentType}"`);
    for (const [k, v] of Object.entries(want))
      if (req.body?.[k] !== v) out.push(`token request field "${k}" is ${JSON.stringify(req.body?.[k])}`);
    for (const k of Object.keys(req.body ?? {})) if (!(k in want)) out.push(`token request has an unexpected field "${k}"`);
    return out;
  };
}
