/**
 * `hook-intake try <wake|agent|NAME>`: a dry run. Builds the request as the
 * server would (payload from a file or stdin, headers from -H), shows which
 * mapping matched and why the earlier ones did not, runs templates and the
 * transform, and prints the actions exactly as they would be dispatched
 * (safety boundary included). Dispatches nothing, writes nothing.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError, formatIssue, isHookError } from '../errors.ts';
import { createLogger } from '../log.ts';
import { authorizeRequest, resolveRequest, type HookRequest, type Resolution } from '../runtime/intake.ts';
import { jsonText, parseJsonText } from '../http/parse.ts';
import { createNamedResolver, explainMatch, type MatchExplanation } from '../mapping/resolve.ts';
import type { PreparedAction } from '../runtime/prepare.ts';
import { commonOptions, helpText, parse, UsageError, type Flag } from './args.ts';
import { offlineGeneration } from './generation.ts';

export const TRY_OPTIONS = {
  ...commonOptions,
  payload: { type: 'string', short: 'p', value: 'FILE|-', help: 'the request body, from a file or - for standard input; default {}' },
  header: { type: 'string', short: 'H', multiple: true, value: "'name: value'", help: 'a request header; repeat for more (content-type is application/json unless given)' },
  json: { type: 'boolean', help: 'print the result as one JSON document' },
} as const satisfies Record<string, Flag>;

const USAGE = 'usage: hook-intake try <wake|agent|NAME> [options]   (hook-intake try --help lists them)\n';

export const TRY_HELP = helpText(
  'hook-intake try <wake|agent|NAME> [options]',
  `A dry run of one request to the wake or agent endpoint or the named hook NAME: shows which mapping
matches and why the earlier ones do not, runs the templates and the transform (with its error and stack
when it throws), and prints the actions exactly as they would be dispatched. Dispatches nothing,
writes nothing. Exits 0 when the server would answer 2xx, 2 when it would answer an error, 1 for
a usage or configuration error.`,
  TRY_OPTIONS,
);

export async function tryHook(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parse(argv, TRY_OPTIONS, true);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`hook-intake try: ${err.message}\n${USAGE}`);
      return 1;
    }
    throw err;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(TRY_HELP);
    return 0;
  }
  const name = positionals[0]?.replace(/^\/+|\/+$/g, '');
  if (!name || positionals.length > 1) {
    process.stderr.write(USAGE);
    return 1;
  }
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const h of values.header ?? []) {
    const i = h.indexOf(':');
    if (i <= 0) {
      process.stderr.write(`hook-intake try: header "${h}" must look like "name: value"\n`);
      return 1;
    }
    headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
  }
  let raw: Buffer;
  try {
    raw = values.payload === undefined ? Buffer.from('{}') : values.payload === '-' ? readFileSync(0) : readFileSync(values.payload);
  } catch (err) {
    process.stderr.write(`hook-intake try: cannot read payload ${values.payload}: ${(err as NodeJS.ErrnoException).code ?? err}\n`);
    return 1;
  }

  let gen;
  try {
    ({ gen } = await offlineGeneration(values.config, values.data));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration is invalid:\n${err.issues.map((i) => `  ${formatIssue(i)}`).join('\n')}\n`);
      return 1;
    }
    throw err;
  }

  const log = createLogger('silent');
  const path = `${gen.config.hooks.path}/${name}`;
  let explanation: MatchExplanation[] = [];
  try {
    const json = jsonText(raw);
    const payload = parseJsonText(json);
    // a dry run stands in for a caller holding the hook token; signatures are still checked
    const req: HookRequest = { name, payload, headers, query: {}, path, url: path, rawBody: raw, json, receivedAt: Date.now(), authenticated: true };
    if (name !== 'wake' && name !== 'agent') explanation = explainMatch(gen, req);
    const named = createNamedResolver({ logger: log });
    const owner = authorizeRequest(gen, req, named);
    if (req.answer) {
      const a = req.answer;
      const shown = 'text' in a ? a.text : JSON.stringify(a.body);
      if (values.json) process.stdout.write(`${JSON.stringify({ hook: name, matching: explanation, status: a.status, direct: true, ...('text' in a ? { text: a.text } : { body: a.body }) }, null, 2)}\n`);
      else process.stdout.write(`${render(name, gen.pipelines.length, explanation, undefined, a.status)}would answer ${a.status} directly (the verifier's answer to a handshake; nothing would run or be stored):\n${shown}\n`);
      return a.status < 300 ? 0 : 2;
    }
    const res = await resolveRequest(gen, req, named, owner);
    const status = answerStatus(res, gen.config.hooks.agentStatus);
    if (values.json) process.stdout.write(`${JSON.stringify({ hook: name, matching: explanation, status, ...(res.kind === 'actions' ? { actions: res.actions } : {}) }, null, 2)}\n`);
    else process.stdout.write(render(name, gen.pipelines.length, explanation, res, status));
    return 0;
  } catch (err) {
    if (isHookError(err)) {
      const failure = err.code === 'TRANSFORM_FAILED' ? transformFailure(err.cause) : undefined;
      if (values.json) {
        const out = { hook: name, matching: explanation, status: err.status, code: err.code, error: err.message, ...(failure ? { transformError: failure } : {}) };
        process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      } else {
        const why = failure ? `transform error: ${[failure.message, ...failure.stack.map((f) => `    ${f}`)].join('\n')}\n` : '';
        process.stdout.write(`${render(name, gen.pipelines.length, explanation, undefined, err.status)}would answer ${err.status} ${err.code}: ${err.message}\n${why}`);
      }
      return 2;
    }
    throw err;
  } finally {
    await gen.dispose();
  }
}

/** Frames that are not the transform's: this program's sources (the worker), Node's, built-ins. */
const NOT_THE_TRANSFORM = [fileURLToPath(new URL('..', import.meta.url)), new URL('..', import.meta.url).href, '(node:internal/', '(<anonymous>)'];

/**
 * What the transform's error was, for the person trying it (the HTTP answer stays opaque): its
 * message, and the stack frames that are the transform's (its file:line, what it called).
 */
function transformFailure(cause: unknown): { message: string; stack: string[] } {
  const e = cause as { message?: unknown; detail?: unknown; stack?: unknown } | undefined;
  const lines = typeof e?.stack === 'string' ? e.stack.split('\n') : [];
  const first = lines.findIndex((l) => /^\s+at /.test(l));
  const stack = first < 0 ? [] : lines.slice(first).map((l) => l.trim()).filter((l) => l.startsWith('at ') && !NOT_THE_TRANSFORM.some((s) => l.includes(s)));
  // an error thrown by the transform: its stack's first lines name the error's class too
  if (stack.length) return { message: lines.slice(0, first).join('\n'), stack };
  return { message: String(e?.detail ?? e?.message ?? cause), stack };
}

function answerStatus(res: Resolution, agentStatus: number): number {
  if (res.kind === 'skip') return 204;
  if (res.actions.length > 1) return 202;
  return res.actions[0]!.kind === 'wake' ? 200 : agentStatus;
}

function render(name: string, mappings: number, explanation: MatchExplanation[], res: Resolution | undefined, status: number): string {
  const out: string[] = [`hook: ${name}`];
  if (name === 'wake' || name === 'agent') out.push(`built-in endpoint /${name}`);
  // (with mappings but no explanation, the request failed before routing, e.g. invalid JSON)
  else if (!mappings) out.push('no mappings are configured');
  for (const e of explanation) out.push(e.matched ? `  match    ${e.id} (${e.origin})` : `  no match ${e.id} (${e.origin}): ${e.reason}`);
  if (!res) return `${out.join('\n')}\n`;
  if (res.kind === 'skip') out.push(`would answer 204: the mapping produced no action (the transform returned null, or forEach found no items)`);
  else {
    out.push(`would answer ${status} and dispatch ${res.actions.length} action(s):`);
    res.actions.forEach((a, i) => out.push(...describe(a, i + 1)));
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
