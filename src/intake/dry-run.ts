/**
 * A dry run of one hook request, shared by `hook-intake try` and the console's
 * tester (`POST /api/try`): which mapping matches and why the earlier ones do
 * not, the templates and the transform run, and the actions exactly as they
 * would be dispatched (safety boundary included), or the error the server
 * would answer with the transform's own error beside it. Dispatches nothing,
 * writes nothing.
 */
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { isHookError } from '../errors.ts';
import type { Generation } from '../generation/types.ts';
import { explainMatch, type MatchExplanation } from '../mapping/find.ts';
import { isBuiltInHook } from '../names.ts';
import { authorize, ownerWithoutCredential } from './credential.ts';
import type { PreparedAction } from './prepare.ts';
import { type HookRequest, parseBody } from './request.ts';
import { eventStep } from './event.ts';
import { resolve } from './resolve.ts';
import { successStatus } from './status.ts';

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
  /** Set when the mapping's signature was not checked (`skipVerify`). */
  signature?: 'not checked';
  /** The event type the mapping named (`event`), when it names one. */
  event?: string;
  /** Why a 204 runs nothing: an event type the mapping does not take, no action made. */
  reason?: string;
}

export interface DryRunOptions {
  /**
   * Run the mapping without checking its signature (`try --skip-verify`, the tester's box), so an
   * example payload can be tried without signing it by hand; the result says it was not checked.
   */
  skipVerify?: boolean;
}

const skipped = (opts: DryRunOptions): Pick<DryRun, 'signature'> => (opts.skipVerify ? { signature: 'not checked' } : {});

/**
 * Runs `name` on the body `raw` with `headers` (lower-case names) through `gen`, as a caller holding
 * the hook token would (signatures are still checked unless `opts.skipVerify`). Throws only what is
 * not a request's error.
 */
export async function dryRun(
  gen: Generation,
  name: string,
  raw: Buffer,
  headers: Record<string, string>,
  logger: Logger,
  now: number,
  opts: DryRunOptions = {},
): Promise<DryRun> {
  const path = `${gen.config.hooks.path}/${name}`;
  let matching: MatchExplanation[] = [];
  try {
    const { payload, json } = parseBody(name, headers['content-type'], raw);
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
    if (!isBuiltInHook(name)) matching = explainMatch(gen, req);
    // the pipeline's steps, without the ones that count or store (rate limit, keep, dispatch)
    const owner = opts.skipVerify ? ownerWithoutCredential(gen, req) : authorize(gen, req, logger);
    if (req.answer) {
      const a = req.answer;
      return { hook: name, matching, status: a.status, direct: true, ...('text' in a ? { text: a.text } : { body: a.body }) };
    }
    const filtered = owner?.event ? eventStep(gen, req, owner) : undefined;
    const event = req.event !== undefined ? { event: req.event } : {};
    if (filtered) return { hook: name, matching, status: 204, reason: filtered, ...event, ...skipped(opts) };
    const res = await resolve(gen, req, owner, logger);
    if (res.kind === 'skip') return { hook: name, matching, status: 204, reason: res.reason, ...event, ...skipped(opts) };
    return {
      hook: name,
      matching,
      status: successStatus(res.actions, gen.config.hooks.agentStatus),
      actions: res.actions,
      ...event,
      ...skipped(opts),
    };
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
  if (isBuiltInHook(r.hook)) out.push(`built-in endpoint /${r.hook}`);
  // (with mappings but no explanation, the request failed before routing, e.g. invalid JSON)
  else if (!mappings) out.push('no mappings are configured');
  for (const e of r.matching) out.push(e.matched ? `  match    ${e.id} (${e.origin})` : `  no match ${e.id} (${e.origin}): ${e.reason}`);
  if (r.direct) {
    const shown = r.text !== undefined ? r.text : JSON.stringify(r.body);
    out.push(`would answer ${r.status} directly (the verifier's answer to a handshake; nothing would run or be stored):`, shown);
  } else if (r.code) {
    out.push(`would answer ${r.status} ${r.code}: ${r.error}`);
    if (r.code === 'INVALID_SIGNATURE') out.push('(the mapping checks a signature: sign the payload, or try it with --skip-verify)');
    const f = r.transformError;
    if (f) out.push(`transform error: ${[f.message, ...f.stack.map((s) => `    ${s}`)].join('\n')}`);
  } else if (!r.actions) {
    if (r.event !== undefined) out.push(`event type: ${r.event || '(none)'}`);
    out.push(`would answer 204: ${r.reason ?? 'the mapping produced no action'}`);
  } else {
    if (r.signature) out.push('signature: not checked (--skip-verify)');
    if (r.event !== undefined) out.push(`event type: ${r.event || '(none)'}`);
    out.push(`would answer ${r.status} and dispatch ${r.actions.length} action(s):`);
    for (const [i, a] of r.actions.entries()) out.push(...describe(a, i + 1));
  }
  return `${out.join('\n')}\n`;
}

function describe(a: PreparedAction, n: number): string[] {
  if (a.kind === 'wake') return [``, `--- action ${n}: wake (mode ${a.mode}) ---`, a.text];
  if (a.kind === 'deliver')
    return [
      ``,
      `--- action ${n}: deliver (no model) ---`,
      `name: ${a.name}`,
      `sessionKey: ${a.sessionKey}`,
      `to: ${a.channel}${a.to ? ` / ${a.to}` : ''}`,
      `message:`,
      a.message,
    ];
  return [
    ``,
    `--- action ${n}: agent ---`,
    `name: ${a.name}`,
    `agent: ${a.agentId}${a.sessionMode === 'isolated' ? ' (isolated session)' : ''}`,
    `sessionKey: ${a.sessionKey}`,
    `model: ${a.model}${a.thinking ? ` (thinking ${a.thinking})` : ''}, timeout ${a.timeoutSeconds}s, wakeMode ${a.wakeMode}`,
    `deliver: ${a.deliver ? `yes, to ${a.channel}${a.to ? ` / ${a.to}` : ''}` : 'no'}`,
    `safety boundary: ${a.trusted ? 'OFF (allowUnsafeExternalContent)' : `on (source "${a.label}")`}`,
    `message:`,
    a.message,
  ];
}
