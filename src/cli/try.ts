/**
 * `hook-intake try <wake|agent|NAME>`: a dry run. Builds the request as the
 * server would (payload from a file or stdin, headers from -H), shows which
 * mapping matched and why the earlier ones did not, runs templates and the
 * transform, and prints the actions exactly as they would be dispatched
 * (safety boundary included). Dispatches nothing, writes nothing.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, formatIssue } from '../errors.ts';
import { createLogger } from '../log.ts';
import { dryRun, renderDryRun } from '../intake/dry-run.ts';
import { commonOptions, helpText, parse, UsageError, type Flag } from './args.ts';
import { offlineGeneration } from './generation.ts';

export const TRY_OPTIONS = {
  ...commonOptions,
  payload: { type: 'string', short: 'p', value: 'FILE|-', help: 'the request body, from a file or - for standard input; default {}' },
  header: {
    type: 'string',
    short: 'H',
    multiple: true,
    value: "'name: value'",
    help: 'a request header; repeat for more (content-type is application/json unless given)',
  },
  'skip-verify': {
    type: 'boolean',
    help: "run a mapping with `verify` without checking the request's signature (the output says so), so an example payload needs no signing",
  },
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

  try {
    const result = await dryRun(gen, name, raw, headers, createLogger('silent'), Date.now(), {
      skipVerify: values['skip-verify'] === true,
    });
    process.stdout.write(values.json ? `${JSON.stringify(result, null, 2)}\n` : renderDryRun(result, gen.pipelines.length));
    if (result.direct) return result.status < 300 ? 0 : 2;
    return result.code ? 2 : 0;
  } finally {
    await gen.dispose();
  }
}
