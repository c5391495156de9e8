/**
 * A stand-in for a gateway's OpenAI-compatible endpoint (docs/integrations.md, "The gateway's
 * OpenAI-compatible endpoint"), built from the chat-completions request shape and the gateway's own
 * rules for it: `POST /v1/chat/completions` only while the endpoint is enabled (else 404), the
 * gateway's auth token as `Authorization: Bearer` (else 401), a JSON body with `model` naming an
 * agent (`openclaw`, `openclaw:<agentId>`, `openclaw/<agentId>` or `agent:<agentId>`) and
 * `messages`, each `{role, content}`. A field chat completions does not have is refused, as are
 * streaming and an unknown agent. A refusal is `400 {error: {message, type}}`, the API's error
 * shape; an accepted request is answered with a completion whose text `reply` makes.
 */
import { completion, json, startStub, type HttpStub, type Recorded } from './http-stub.ts';

/** The request fields of chat completions the stand-in takes (the API's own, not all of them). */
const FIELDS = new Set([
  'model',
  'messages',
  'stream',
  'user',
  'temperature',
  'top_p',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'reasoning_effort',
  'n',
  'presence_penalty',
  'frequency_penalty',
  'seed',
  'metadata',
]);
const ROLES = new Set(['system', 'developer', 'user', 'assistant']);
const AGENT_MODEL = /^(?:openclaw|openclaw[:/](?<a>[\w-]+)|agent:(?<b>[\w-]+))$/;

export interface ChatCompletionsStandIn {
  /** The gateway's base URL (the endpoint is `<url>/v1/chat/completions`). */
  url: string;
  stub: HttpStub;
  /** Requests answered with a completion, with the agent each named. */
  accepted: { agentId: string; body: any }[];
  close(): Promise<void>;
}

/** What chat completions refuses in `body`, if anything. */
function refusal(body: any, agents: readonly string[]): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'the body must be a JSON object';
  for (const k of Object.keys(body)) if (!FIELDS.has(k)) return `Unrecognized request argument supplied: ${k}`;
  const m = typeof body.model === 'string' ? AGENT_MODEL.exec(body.model) : null;
  if (!m) return `model must name an agent (openclaw:<agentId>), not ${JSON.stringify(body.model)}`;
  const agentId = m.groups?.a ?? m.groups?.b ?? 'main';
  if (!agents.includes(agentId)) return `unknown agent ${agentId}`;
  if (body.stream === true) return 'this stand-in answers without streaming';
  if (!Array.isArray(body.messages) || !body.messages.length) return 'messages must be a non-empty array';
  for (const msg of body.messages)
    if (!ROLES.has(msg?.role) || typeof msg.content !== 'string') return 'each message must be {role, content} with a text content';
  return undefined;
}

export async function startChatCompletionsStandIn(opts: {
  /** The gateway's auth token (`gateway.auth.token`). */
  token: string;
  /** Whether `gateway.http.endpoints.chatCompletions.enabled` is on. */
  enabled: boolean;
  agents?: string[];
  reply: (body: any) => string;
}): Promise<ChatCompletionsStandIn> {
  const accepted: ChatCompletionsStandIn['accepted'] = [];
  const agents = opts.agents ?? ['main'];
  const stub = await startStub((req: Recorded, res) => {
    if (!opts.enabled || req.url !== '/v1/chat/completions') return json(res, 404, { error: { message: 'Not Found', type: 'not_found' } });
    if (req.method !== 'POST') return json(res, 405, { error: { message: 'Method Not Allowed', type: 'invalid_request_error' } });
    if (req.headers.authorization !== `Bearer ${opts.token}`)
      return json(res, 401, { error: { message: 'Unauthorized', type: 'authentication_error' } });
    if (!String(req.headers['content-type']).startsWith('application/json'))
      return json(res, 415, { error: { message: 'content-type must be application/json', type: 'invalid_request_error' } });
    const why = refusal(req.json, agents);
    if (why) return json(res, 400, { error: { message: why, type: 'invalid_request_error' } });
    const m = AGENT_MODEL.exec(req.json.model)!;
    accepted.push({ agentId: m.groups?.a ?? m.groups?.b ?? 'main', body: req.json });
    json(res, 200, completion(opts.reply(req.json)));
  });
  return { url: stub.url, stub, accepted, close: () => stub.close() };
}
