/**
 * `hook-intake try <wake|agent|NAME>`: a dry run. Builds the request as the
 * server would (payload from a file or stdin, headers from -H), resolves it to
 * prepared actions (safety boundary included) and prints them. Dispatches nothing.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '../config/load.ts';
import { ConfigError, formatIssue, isHookError } from '../errors.ts';
import { createLogger } from '../log.ts';
import { createRegistry } from '../plugins/registry.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { buildGeneration } from '../runtime/generation.ts';
import { resolveRequest, type HookRequest } from '../runtime/intake.ts';
import { parseJson } from '../http/parse.ts';
import { commonOptions, parse, resolveDataDir, UsageError } from './args.ts';
import { dataDirTokens } from './tokens.ts';

export async function tryHook(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parse(argv, { ...commonOptions, payload: { type: 'string', short: 'p' }, header: { type: 'string', short: 'H', multiple: true } }, true);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`hook-intake try: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const { values, positionals } = parsed;
  const name = positionals[0]?.replace(/^\/+|\/+$/g, '');
  if (!name || positionals.length > 1) {
    process.stderr.write('usage: hook-intake try <wake|agent|NAME> [--config FILE] [--payload FILE|-] [-H "name: value"]\n');
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
  const dataDir = resolve(resolveDataDir(values.data));
  try {
    const loaded = loadConfig({ file: values.config, dataDir, tokenFallback: dataDirTokens(dataDir, false).fallback });
    const registry = createRegistry();
    for (const p of builtinPlugins) registry.register(p);
    const gen = buildGeneration(loaded, { registry, logger: createLogger('silent') });
    const path = `${gen.config.hooks.path}/${name}`;
    const req: HookRequest = { name, payload: parseJson(raw), headers, query: {}, path, url: path, rawBody: raw, receivedAt: Date.now() };
    const res = await resolveRequest(gen, req);
    const out = res.kind === 'skip' ? { result: 'skip (204: the transform returned null)' } : { actions: res.actions };
    process.stdout.write(`${JSON.stringify({ hook: name, ...(res.mappingId ? { mapping: res.mappingId } : {}), ...out }, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration is invalid:\n${err.issues.map((i) => `  ${formatIssue(i)}`).join('\n')}\n`);
      return 1;
    }
    if (isHookError(err)) {
      process.stdout.write(`${JSON.stringify({ hook: name, status: err.status, code: err.code, error: err.message }, null, 2)}\n`);
      return 2;
    }
    throw err;
  }
}
