/**
 * A stand-in for a gateway's hooks, built from their published contract (docs/integrations.md,
 * "In front of a gateway"): `POST <base>/agent` and `POST <base>/wake`, the hook token as
 * `Authorization: Bearer`, JSON bodies with the contract's fields, each of its type. A request the
 * contract refuses gets the refusal a gateway gives (`401 Unauthorized`, `400 {ok: false, error}`,
 * `413`), so a test sees what a wrong request would meet; stricter than a gateway, a field the
 * contract does not name is refused too, so a test sees that nothing else is sent. An accepted agent request is
 * `202 {ok: true, runId}`, and a repeat with the same `Idempotency-Key` gets the first run's id
 * without starting another. `script` answers the next requests otherwise (a 503, a 400, …).
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { json, startStub, type HttpStub, type Recorded } from './http-stub.ts';

/** The channels the contract names for `channel`. */
const CHANNELS = ['last', 'whatsapp', 'telegram', 'discord', 'slack', 'mattermost', 'signal', 'imessage', 'msteams'];
const MODES = ['now', 'next-heartbeat'];
const MAX_BODY_BYTES = 256 * 1024;

type Check = (v: unknown) => boolean;
const text: Check = (v) => typeof v === 'string';
const nonBlank: Check = (v) => typeof v === 'string' && v.trim() !== '';
const AGENT: Record<string, Check> = {
  message: nonBlank,
  name: text,
  sessionKey: nonBlank,
  wakeMode: (v) => MODES.includes(v as string),
  deliver: (v) => typeof v === 'boolean',
  channel: (v) => CHANNELS.includes(v as string),
  to: nonBlank,
  model: nonBlank,
  thinking: nonBlank,
  timeoutSeconds: (v) => typeof v === 'number' && Number.isFinite(v) && v > 0,
};
const WAKE: Record<string, Check> = { text: nonBlank, mode: (v) => MODES.includes(v as string) };

/** A run the stand-in started: the request's body as it took it. */
export interface StartedRun {
  runId: string;
  body: Record<string, unknown>;
}

export interface GatewayStandIn {
  /** The hooks base to configure as the provider's `url`. */
  url: string;
  stub: HttpStub;
  /** Agent runs started, in order (a repeated idempotency key starts none). */
  runs: StartedRun[];
  /** Wakes taken, in order. */
  wakes: Record<string, unknown>[];
  /** Answers the next requests with these, one each, before the contract's own answer. */
  script(...answers: ((res: ServerResponse) => void)[]): void;
  /** Forgets the requests, runs, wakes, idempotency keys and scripted answers so far. */
  reset(): void;
  close(): Promise<void>;
}

/** The first field the contract refuses, as the gateway says it: `<field> required` or `invalid <field>`. */
function refusal(body: Record<string, unknown>, fields: Record<string, Check>, required: string): string | undefined {
  if (!nonBlank(body[required])) return `${required} required`;
  for (const [k, v] of Object.entries(body)) {
    const check = fields[k];
    if (!check) return `unknown field ${k}`;
    if (!check(v)) return `invalid ${k}`;
  }
  return undefined;
}

/**
 * The hooks config of the gateway it stands in for: `hooks.token`, `hooks.path` (default `/hooks`),
 * and the session-key policy of gateways from 2026.2 on (docs/integrations.md, "In front of a
 * gateway"): with `allowRequestSessionKey: false` a request's `sessionKey` is refused, and with
 * `allowedSessionKeyPrefixes` one that starts with none of them. Absent, a key is taken, as the seed
 * contract does.
 */
export interface GatewayHooksConfig {
  token: string;
  path?: string;
  allowRequestSessionKey?: boolean;
  allowedSessionKeyPrefixes?: string[];
}

/** Why the gateway's session-key policy refuses `key`, if it does. */
function sessionKeyRefusal(opts: GatewayHooksConfig, key: unknown): string | undefined {
  if (key === undefined) return undefined;
  if (opts.allowRequestSessionKey === false) return 'sessionKey is not allowed (hooks.allowRequestSessionKey)';
  const prefixes = opts.allowedSessionKeyPrefixes;
  if (prefixes && !prefixes.some((p) => String(key).startsWith(p))) return 'sessionKey does not start with an allowed prefix';
  return undefined;
}

export async function startGatewayStandIn(opts: GatewayHooksConfig): Promise<GatewayStandIn> {
  const base = opts.path ?? '/hooks';
  const runs: StartedRun[] = [];
  const wakes: Record<string, unknown>[] = [];
  const byKey = new Map<string, string>();
  const scripted: ((res: ServerResponse) => void)[] = [];

  const handle = (req: Recorded, res: ServerResponse) => {
    const next = scripted.shift();
    if (next) return next(res);
    const plain = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(body);
    };
    const path = new URL(req.url, 'http://x').pathname;
    if (path !== `${base}/agent` && path !== `${base}/wake`) return plain(404, 'Not Found');
    if (req.headers.authorization !== `Bearer ${opts.token}`) return plain(401, 'Unauthorized');
    if (req.method !== 'POST') return plain(405, 'Method Not Allowed');
    if (req.raw.length > MAX_BODY_BYTES) return json(res, 413, { ok: false, error: 'payload too large' });
    const body = req.json as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return json(res, 400, { ok: false, error: 'invalid JSON' });
    if (path === `${base}/wake`) {
      const why = refusal(body, WAKE, 'text');
      if (why) return json(res, 400, { ok: false, error: why });
      wakes.push(body);
      return json(res, 200, { ok: true, mode: body.mode ?? 'now' });
    }
    const why = refusal(body, AGENT, 'message') ?? sessionKeyRefusal(opts, body.sessionKey);
    if (why) return json(res, 400, { ok: false, error: why });
    const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined;
    const seen = key === undefined ? undefined : byKey.get(key);
    if (seen) return json(res, 202, { ok: true, runId: seen });
    const runId = randomUUID();
    if (key !== undefined) byKey.set(key, runId);
    runs.push({ runId, body });
    json(res, 202, { ok: true, runId });
  };

  const stub = await startStub(handle);
  return {
    url: `${stub.url}${base}`,
    stub,
    runs,
    wakes,
    script: (...answers) => scripted.push(...answers),
    reset: () => {
      stub.requests.length = 0;
      runs.length = 0;
      wakes.length = 0;
      byKey.clear();
      scripted.length = 0;
    },
    close: () => stub.close(),
  };
}
