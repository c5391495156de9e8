/**
 * A dry run of one hook request, shared by `hook-intake try` and the console's
 * tester (`POST /api/try`): which mapping matches and why the earlier ones do
 * not, the templates and the transform run, and the actions exactly as they
 * would be dispatched (safety boundary included), or the error the server
 * would answer with the transform's own error beside it. Dispatches nothing,
 * writes nothing.
 */
import { fileURLToPath } from 'node:url';
import { isHookError } from '../errors.ts';
import { jsonText, parseJsonText } from './parse.ts';
import { createNamedResolver, explainMatch, type MatchExplanation } from '../mapping/resolve.ts';
import type { Logger } from 'pino';
import type { Generation } from '../generation/build.ts';
import { authorizeRequest, resolveRequest, type HookRequest } from './resolve.ts';
import type { PreparedAction } from './prepare.ts';

/** What a dry run shows; `hook-intake try --json` prints it as it is. */
export interface DryRun {
  hook: string;
  matching: MatchExplanation[];
  status: number;
  /** A verifier answered the request itself (a handshake): `text` or `body` is that answer. */
  direct?: true;
  text?: string;
  body?: unknown;
  /** The actions of a 2xx answer (absent for a 204: the mapping produced none). */
  actions?: PreparedAction[];
  /** An error answer: its code and message, and what the transform threw when it failed. */
  code?: string;
  error?: string;
  transformError?: { message: string; stack: string[] };
}

/**
 * Runs `name` on the body `raw` with `headers` (lower-case names) through `gen`, as a caller holding
 * the hook token would (signatures are still checked). Throws only what is not a request's error.
 */
export async function dryRun(
  gen: Generation,
  name: string,
  raw: Buffer,
  headers: Record<string, string>,
  logger: Logger,
  now: number,
): Promise<DryRun> {
  const path = `${gen.config.hooks.path}/${name}`;
  let matching: MatchExplanation[] = [];
  try {
    const json = jsonText(raw);
    const payload = parseJsonText(json);
    const req: HookRequest = {
      name,
      payload,
      headers,
      query: {},
      path,
      url: path,
      rawBody: raw,
      json,
      receivedAt: now,
      authenticated: true,
    };
    if (name !== 'wake' && name !== 'agent') matching = explainMatch(gen, req);
    // its own resolver: a dry run does not use up a mapping's rate limit
    const named = createNamedResolver({ logger });
    const owner = authorizeRequest(gen, req, named);
    if (req.answer) {
      const a = req.answer;
      return { hook: name, matching, status: a.status, direct: true, ...('text' in a ? { text: a.text } : { body: a.body }) };
    }
    const res = await resolveRequest(gen, req, named, owner);
    if (res.kind === 'skip') return { hook: name, matching, status: 204 };
    const status = res.actions.length > 1 ? 202 : res.actions[0]!.kind === 'wake' ? 200 : gen.config.hooks.agentStatus;
    return { hook: name, matching, status, actions: res.actions };
  } catch (err) {
    if (!isHookError(err)) throw err;
    const failure = err.code === 'TRANSFORM_FAILED' ? transformFailure(err.cause) : undefined;
    return {
      hook: name,
      matching,
      status: err.status,
      code: err.code,
      error: err.message,
      ...(failure ? { transformError: failure } : {}),
    };
  }
}

/** Frames that are not the transform's: this program's sources (the worker), Node's, built-ins. */
const NOT_THE_TRANSFORM = [
  fileURLToPath(new URL('..', import.meta.url)),
  new URL('..', import.meta.url).href,
  '(node:internal/',
  '(<anonymous>)',
];

/**
 * What the transform's error was, for the person trying it (the HTTP answer stays opaque): its
 * message, and the stack frames that are the transform's (its file:line, what it called).
 */
function transformFailure(cause: unknown): { message: string; stack: string[] } {
  const e = cause as { message?: unknown; detail?: unknown; stack?: unknown } | undefined;
  const lines = typeof e?.stack === 'string' ? e.stack.split('\n') : [];
  const first = lines.findIndex((l) => /^\s+at /.test(l));
  const stack =
    first < 0
      ? []
      : lines
          .slice(first)
          .map((l) => l.trim())
          .filter((l) => l.startsWith('at ') && !NOT_THE_TRANSFORM.some((s) => l.includes(s)));
  // an error thrown by the transform: its stack's first lines name the error's class too
  if (stack.length) return { message: lines.slice(0, first).join('\n'), stack };
  return { message: String(e?.detail ?? e?.message ?? cause), stack };
}

/** The dry run as `hook-intake try` prints it; `mappings` is how many the configuration has. */
export function renderDryRun(r: DryRun, mappings: number): string {
  const out: string[] = [`hook: ${r.hook}`];
  if (r.hook === 'wake' || r.hook === 'agent') out.push(`built-in endpoint /${r.hook}`);
  // (with mappings but no explanation, the request failed before routing, e.g. invalid JSON)
  else if (!mappings) out.push('no mappings are configured');
  for (const e of r.matching) out.push(e.matched ? `  match    ${e.id} (${e.origin})` : `  no match ${e.id} (${e.origin}): ${e.reason}`);
  if (r.direct) {
    const shown = r.text !== undefined ? r.text : JSON.stringify(r.body);
    out.push(`would answer ${r.status} directly (the verifier's answer to a handshake; nothing would run or be stored):`, shown);
  } else if (r.code) {
    out.push(`would answer ${r.status} ${r.code}: ${r.error}`);
    const f = r.transformError;
    if (f) out.push(`transform error: ${[f.message, ...f.stack.map((s) => `    ${s}`)].join('\n')}`);
  } else if (!r.actions) {
    out.push(`would answer 204: the mapping produced no action (the transform returned null, or forEach found no items)`);
  } else {
    out.push(`would answer ${r.status} and dispatch ${r.actions.length} action(s):`);
    for (const [i, a] of r.actions.entries()) out.push(...describe(a, i + 1));
  }
  return `${out.join('\n')}\n`;
}

function describe(a: PreparedAction, n: number): string[] {
  if (a.kind === 'wake') return [``, `--- action ${n}: wake (mode ${a.mode}) ---`, a.text];
  return [
    ``,
    `--- action ${n}: agent ---`,
    `name: ${a.name}`,
    `sessionKey: ${a.sessionKey}`,
    `model: ${a.model}${a.thinking ? ` (thinking ${a.thinking})` : ''}, timeout ${a.timeoutSeconds}s, wakeMode ${a.wakeMode}`,
    `deliver: ${a.deliver ? `yes, to ${a.channel}${a.to ? ` / ${a.to}` : ''}` : 'no'}`,
    `safety boundary: ${a.trusted ? 'OFF (allowUnsafeExternalContent)' : `on (source "${a.label}")`}`,
    `message:`,
    a.message,
  ];
}
