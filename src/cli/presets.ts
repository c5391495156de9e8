/**
 * `hook-intake presets` lists the presets a configuration can enable; `hook-intake presets show NAME`
 * prints one: its options, signature, event types, and a sample message made by running its sample
 * payload through the real pipeline (docs/presets.md).
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { builtinPlugins } from '../../plugins/index.ts';
import { configFromData, findConfigFile, type LoadedConfig, loadConfig } from '../config/load.ts';
import { ConfigError, formatIssue } from '../errors.ts';
import { buildGeneration } from '../generation/build.ts';
import { dryRun } from '../intake/dry-run.ts';
import { createLogger } from '../log.ts';
import type { PresetDefinition } from '../plugins/define.ts';
import { type CatalogEntry, presetCatalog } from '../presets/catalog.ts';
import { COMMON_OPTIONS, credentialOption, presetEntry } from '../presets/instantiate.ts';
import { stripBoundary } from '../safety/boundary.ts';
import { didYouMean } from '../util/did-you-mean.ts';
import { type Flag, helpText, parse, UsageError } from './args.ts';

export const PRESETS_OPTIONS = {
  config: {
    type: 'string',
    short: 'c',
    value: 'FILE',
    help: 'the config whose plugins may add presets, and whose enabled ones are marked',
  },
  json: { type: 'boolean', help: 'print one JSON document' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
} as const satisfies Record<string, Flag>;

export const PRESETS_HELP = helpText(
  'hook-intake presets [show NAME] [options]',
  `Lists the presets: the built-in ones and those the config's plugins add, with what each verifies and
where the config enables it. "presets show NAME" prints one preset's options, event types and a
sample message as the agent would see it. "hook-intake sources add NAME" writes one into the config.`,
  PRESETS_OPTIONS,
);

export async function presets(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse<typeof PRESETS_OPTIONS>>;
  try {
    parsed = parse(argv, PRESETS_OPTIONS, true);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`hook-intake presets: ${err.message}\n`);
    return 1;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(PRESETS_HELP);
    return 0;
  }
  const [sub, name, ...rest] = positionals;
  if ((sub !== undefined && sub !== 'show') || (sub === 'show' && !name) || rest.length) {
    process.stderr.write('usage: hook-intake presets [show NAME] [--config FILE] [--json]\n');
    return 1;
  }
  const loaded = configIfAny(values.config);
  if (loaded instanceof ConfigError) {
    process.stderr.write(`configuration is invalid:\n${loaded.issues.map((i) => `  ${formatIssue(i)}`).join('\n')}\n`);
    return 1;
  }
  const catalog = await presetCatalog(loaded);
  for (const i of catalog.issues) process.stderr.write(`warning: ${formatIssue(i)}\n`);
  if (sub === 'show') return show(catalog.presets, name!, loaded, values.json === true);
  return list(catalog.presets, loaded, values.json === true);
}

/** The config when there is one (its plugins add presets); none is not an error here. */
function configIfAny(flag: string | undefined): LoadedConfig | undefined | ConfigError {
  const file = findConfigFile({ file: flag });
  if (!file) return undefined;
  try {
    return loadConfig({ file, only: ['plugins', 'hooks'], tokenFallback: () => 'x'.repeat(32) });
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
}

/** Where the config enables `name`: the hook paths of its entries. */
function enabledAt(name: string, loaded: LoadedConfig | undefined): string[] {
  const hooks = loaded?.config.hooks;
  if (!hooks) return [];
  return hooks.presets
    .map(presetEntry)
    .filter((e) => e.name === name)
    .map((e) => `${hooks.path}/${e.path ?? name}`);
}

function list(entries: CatalogEntry[], loaded: LoadedConfig | undefined, json: boolean): number {
  const rows = entries.map((e) => ({
    name: e.name,
    description: e.def.description ?? '',
    signature: e.def.mappings ? 'mappings' : (e.def.verify ?? 'hook token'),
    origin: e.origin,
    enabledAt: enabledAt(e.name, loaded),
  }));
  if (json) {
    process.stdout.write(`${JSON.stringify({ presets: rows }, null, 2)}\n`);
    return 0;
  }
  const width = Math.max(4, ...rows.map((r) => r.name.length));
  const out = rows.map((r) => {
    const on = r.enabledAt.length ? `  [enabled at ${r.enabledAt.join(', ')}]` : '';
    const from = r.origin === 'built in' ? '' : `  (from ${r.origin})`;
    return `${r.name.padEnd(width)}  ${r.description}${from}${on}`;
  });
  process.stdout.write(`${out.join('\n')}\n\nhook-intake presets show NAME: its options, event types and a sample message\n`);
  return 0;
}

async function show(entries: CatalogEntry[], name: string, loaded: LoadedConfig | undefined, json: boolean): Promise<number> {
  const entry = entries.find((e) => e.name === name);
  if (!entry) {
    const hint = didYouMean(
      name,
      entries.map((e) => e.name),
    );
    process.stderr.write(`hook-intake presets: no preset "${name}"${hint ? ` (did you mean "${hint}"?)` : ''}\n`);
    return 1;
  }
  const d = entry.def;
  const sample = await sampleMessage(entry, loaded);
  const facts = {
    name,
    description: d.description ?? '',
    origin: entry.origin,
    signature: d.mappings ? null : (d.verify ?? null),
    // a public-key preset takes no secret
    options: d.mappings
      ? []
      : [...COMMON_OPTIONS.filter((o) => credentialOption(d) !== 'publicKey' || !o.startsWith('secret')), ...(d.verifyOptions ?? [])],
    secretRequired: d.verify !== undefined,
    eventType: d.event ?? null,
    events: d.events ?? [],
    idempotencyKey: d.idempotencyKey ?? null,
    enabledAt: enabledAt(name, loaded),
    sample,
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(facts, null, 2)}\n`);
    return 0;
  }
  const lines = [
    `${name}: ${facts.description}${entry.origin === 'built in' ? '' : ` (from ${entry.origin})`}`,
    d.mappings
      ? 'a preset of mappings: it takes no options (docs/mappings.md, "Presets")'
      : `signature: ${facts.signature ?? 'none: the hook token is the credential'}${facts.secretRequired ? ` (option ${credentialOption(d)} is required)` : ''}`,
    ...(d.mappings ? [] : [`options: ${facts.options.join(', ')}`]),
    ...(facts.eventType ? [`event type: ${facts.eventType}`] : []),
    ...(facts.idempotencyKey ? [`idempotency key: ${facts.idempotencyKey}`] : []),
    ...(facts.events.length ? [`event types (${facts.events.length}): ${facts.events.join(', ')}`] : []),
    ...(facts.enabledAt.length ? [`enabled at: ${facts.enabledAt.join(', ')}`] : []),
    sample ? `\nsample message (${sample.from}):\n${sample.message}` : '\n(no sample payload to show a message with)',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

/** The preset's sample payload: the one its definition names, else the first JSON file of its fixtures. */
function samplePayload(d: PresetDefinition): { file: string; headers: Record<string, string> } | undefined {
  const dir = d.transformsDir;
  if (!dir) return undefined;
  if (d.sample) return { file: join(dir, d.sample.payload), headers: d.sample.headers ?? {} };
  const fixtures = join(dir, 'fixtures');
  const first = existsSync(fixtures)
    ? readdirSync(fixtures)
        .filter((f) => f.endsWith('.json'))
        .sort()[0]
    : undefined;
  return first ? { file: join(fixtures, first), headers: {} } : undefined;
}

/** The sample payload through a generation with only this preset enabled, its signature not checked, as `try --skip-verify` would. */
async function sampleMessage(
  entry: CatalogEntry,
  loaded: LoadedConfig | undefined,
): Promise<{ from: string; message: string } | undefined> {
  const sample = samplePayload(entry.def);
  if (!sample || !existsSync(sample.file)) return undefined;
  const secret = sampleCredential(entry.def);
  const plugins = entry.origin === 'built in' ? [] : (loaded?.config.plugins ?? []);
  const config = configFromData(
    { hooks: { enabled: true, token: 'sample-token-0123456789abcdef012345', presets: [{ name: entry.name, ...secret }] }, plugins },
    loaded?.dir ?? process.cwd(),
    `(a sample of ${entry.name})`,
  );
  const gen = await buildGeneration(config, { builtins: builtinPlugins, logger: createLogger('silent') });
  try {
    const { body, fixtureHeaders } = fixtureBody(readFileSync(sample.file));
    const headers = { 'content-type': 'application/json', ...lowerCase(fixtureHeaders), ...lowerCase(sample.headers) };
    const r = await dryRun(gen, entry.name, body, headers, createLogger('silent'), Date.now(), { skipVerify: true });
    const first = r.actions?.[0];
    const text = first ? (first.kind === 'wake' ? first.text : first.message) : (r.error ?? `answered ${r.status}`);
    const shownHeaders = Object.entries(sample.headers).map(([k, v]) => `${k}: ${v}`);
    return {
      from: [sample.file.slice((entry.def.transformsDir?.length ?? 0) + 1), ...shownHeaders].join(', '),
      message: stripBoundary(text).trim(),
    };
  } finally {
    await gen.dispose();
  }
}

/**
 * A credential the sample's preset takes (its signature is not checked): a P-256 key for a public-key
 * scheme, else a secret of the `user:password` form that the secret schemes all accept.
 */
function sampleCredential(d: PresetDefinition): Record<string, string> {
  const option = credentialOption(d);
  if (option === 'publicKey') {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    return { publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64') };
  }
  return option ? { secret: 'sample-user:sample-secret-0123456789' } : {};
}

/**
 * A fixture's request body: the file as it is, or the `payload` of a fixture kept as `{source, payload,
 * headers?}` (a provider's example with where it was published, docs/presets.md "How a preset is made").
 */
function fixtureBody(file: Buffer): { body: Buffer; fixtureHeaders: Record<string, string> } {
  try {
    const f = JSON.parse(file.toString('utf8')) as { source?: unknown; payload?: unknown; headers?: Record<string, string> };
    if (typeof f.source === 'string' && f.payload !== null && typeof f.payload === 'object')
      return { body: Buffer.from(JSON.stringify(f.payload)), fixtureHeaders: f.headers ?? {} };
  } catch {
    // not JSON: sent as it is, and the dry run says what it made of it
  }
  return { body: file, fixtureHeaders: {} };
}

const lowerCase = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
