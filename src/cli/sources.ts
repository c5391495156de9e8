/**
 * `hook-intake sources add NAME`: wires one source in one command (docs/presets.md, "Adding a source").
 * It writes the preset's entry into `hooks.presets` of the config file, keeping the file's other
 * content and comments, turns the hooks on with a token when they are off, keeps a secret it makes in
 * a file of mode 0600 (the config refers to it), and prints the steps left on the provider's side.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { type ConfigEditor, editConfigFile } from '../config/edit.ts';
import { DEFAULT_CONFIG_FILE, findConfigFile, loadConfig, parseConfigText } from '../config/load.ts';
import type { PresetEntryConfig } from '../config/schema.ts';
import { fileRef, newToken, SECRETS_DIR, writeSecretFile } from '../config/secret-files.ts';
import { ConfigError, formatIssue } from '../errors.ts';
import { type CatalogEntry, presetCatalog } from '../presets/catalog.ts';
import { credentialOption, presetEntry } from '../presets/instantiate.ts';
import { didYouMean } from '../util/did-you-mean.ts';
import { commonOptions, type Flag, helpText, parse, resolveDataDir, UsageError } from './args.ts';
import { dataDirTokens } from './tokens.ts';

export const SOURCES_OPTIONS = {
  ...commonOptions,
  secret: { type: 'string', value: 'VALUE', help: 'the signing secret the provider shows you (kept in a file of mode 0600)' },
  'secret-env': { type: 'string', value: 'NAME', help: 'write the secret as ${NAME}, read from the environment at start' },
  path: { type: 'string', value: 'NAME', help: 'the hook path: POST /hooks/NAME (default: the preset name)' },
  events: { type: 'string', value: 'A,B', help: 'the event types to take, comma-separated (default: all)' },
  url: { type: 'string', value: 'URL', help: 'the public base URL the provider reaches this service at, for the printed steps' },
} as const satisfies Record<string, Flag>;

export const SOURCES_HELP = helpText(
  'hook-intake sources add NAME [options]',
  `Enables the preset NAME (hook-intake presets lists them) in the config file, keeping its comments:
an entry in hooks.presets with its path, events and secret; hooks.enabled and a hook token when
missing. Without --secret or --secret-env a preset that checks signatures gets a new random secret,
kept in a file of mode 0600 next to the config. Prints the steps left on the provider's side.`,
  SOURCES_OPTIONS,
);

export async function sources(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse<typeof SOURCES_OPTIONS>>;
  try {
    parsed = parse(argv, SOURCES_OPTIONS, true);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`hook-intake sources: ${err.message}\n`);
    return 1;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(SOURCES_HELP);
    return 0;
  }
  const [sub, name, ...rest] = positionals;
  if (sub !== 'add' || !name || rest.length) {
    process.stderr.write('usage: hook-intake sources add NAME [--secret VALUE | --secret-env NAME] [--path NAME] [--events A,B]\n');
    return 1;
  }
  if (values.secret !== undefined && values['secret-env'] !== undefined) {
    process.stderr.write('hook-intake sources: give --secret or --secret-env, not both\n');
    return 1;
  }
  const file = findConfigFile({ file: values.config }) ?? resolve(values.config ?? DEFAULT_CONFIG_FILE);
  try {
    return await add(name, file, values);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`hook-intake sources: ${err.issues.map((i) => formatIssue(i)).join('\n  ')}\n`);
    return 1;
  }
}

type Values = ReturnType<typeof parse<typeof SOURCES_OPTIONS>>['values'];

async function add(name: string, file: string, values: Values): Promise<number> {
  const existed = existsSync(file);
  // the file as written (no variable resolved: one may be set only where the service runs)
  const raw = existed ? rawConfig(file) : {};
  const plugins = Array.isArray(raw.plugins) ? raw.plugins.filter((p): p is string => typeof p === 'string') : [];
  const { presets } = await presetCatalog({ file, dir: dirname(file), config: { plugins } });
  const entry = presets.find((p) => p.name === name);
  if (!entry) {
    const hint = didYouMean(
      name,
      presets.map((p) => p.name),
    );
    process.stderr.write(
      `hook-intake sources: no preset "${name}"${hint ? ` (did you mean "${hint}"?)` : ''}; hook-intake presets lists them\n`,
    );
    return 1;
  }
  if (entry.def.mappings) {
    process.stderr.write(`hook-intake sources: "${name}" is a preset of mappings; enable it in hooks.presets (see its docs)\n`);
    return 1;
  }
  const path = (values.path ?? name).replace(/^\/+|\/+$/g, '');
  const listed = (raw.hooks as { presets?: unknown } | undefined)?.presets;
  const entries = (Array.isArray(listed) ? listed : []).filter(
    (e) => typeof e === 'string' || (e && typeof e === 'object'),
  ) as PresetEntryConfig[];
  const taken = entries.map(presetEntry).find((e) => (e.path ?? e.name) === path);
  if (taken) {
    process.stderr.write(
      `hook-intake sources: hooks.presets already has an entry on path "${path}" (${taken.name}); choose another --path\n`,
    );
    return 1;
  }

  // a public key is the provider's to give: there is no new random one to make
  if (credentialOption(entry.def) === 'publicKey' && values.secret === undefined && values['secret-env'] === undefined) {
    process.stderr.write(
      `hook-intake sources: the "${name}" preset checks the provider's key: give the key it shows with --secret or --secret-env\n`,
    );
    return 1;
  }
  if (!existed) writeFileSync(file, ['.yaml', '.yml'].includes(extname(file).toLowerCase()) ? '' : '{\n}\n');
  const dir = dirname(file);
  const notes: string[] = existed ? [] : [`created ${file}`];
  editConfigFile(file, (edit) => {
    if (edit.get(['hooks', 'enabled']) !== true) edit.set(['hooks', 'enabled'], true);
    if (edit.get(['hooks', 'token']) === undefined) {
      const data = resolveDataDir(values.data, file);
      const value = dataDirTokens(data.dir, false).fallback('hooks') ?? newToken();
      notes.push(`hook token written to ${secretFile(edit, ['hooks', 'token'], 'hook-token', value, dir)} (mode 0600)`);
    }
    edit.addToList(['hooks', 'presets'], presetItem(entry, path, values, dir, notes));
  });
  notes.push(`config written: ${file} (hooks.presets: ${name} on /${path})`);

  // the file as serve will read it: a problem shows now, not at the next start (a variable it names may be set only there)
  const hooksPath = checkWritten(file, values, notes);
  const url = `${(values.url ?? 'https://<your public host>').replace(/\/+$/, '')}${hooksPath}/${path}`;
  process.stdout.write(`${notes.join('\n')}\n\n${steps(entry, url, values).join('\n')}\n`);
  return 0;
}

function rawConfig(file: string): Record<string, unknown> {
  const parsed = parseConfigText(readFileSync(file, 'utf8'), file);
  if (parsed.issues.length) throw new ConfigError(parsed.issues);
  const data = parsed.data;
  return data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
}

/** Loads the file as `serve` would; returns the hooks path. Variables not set here are noted, anything else thrown. */
function checkWritten(file: string, values: Values, notes: string[]): string {
  try {
    return loadConfig({ file, dataDir: resolveDataDir(values.data, file).dir, tokenFallback: () => 'x'.repeat(32) }).config.hooks.path;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const unset = err.issues.map((i) => /environment variable (\S+) is not set/.exec(i.message)?.[1]);
    if (unset.some((v) => v === undefined)) throw err;
    notes.push(`set ${[...new Set(unset)].join(', ')} in the service's environment before it starts`);
    return loadConfig({ file, only: ['gateway'] }).config.hooks.path;
  }
}

/** The entry `sources add` writes: the preset's name, its path when not the default, its events and secret. */
function presetItem(entry: CatalogEntry, path: string, values: Values, dir: string, notes: string[]): Record<string, unknown> {
  const item: Record<string, unknown> = { name: entry.name };
  if (path !== entry.name) item.path = path;
  if (values.events)
    item.events = values.events
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
  const option = credentialOption(entry.def);
  if (!option) return item;
  if (values['secret-env']) {
    item[option] = `\${${values['secret-env']}}`;
    notes.push(`${option}: read from $${values['secret-env']} at start`);
    return item;
  }
  // Postmark's credential is the user:password written into its webhook URL
  const value = values.secret ?? (entry.def.verify === 'postmark' ? `hook-intake:${newToken()}` : newToken());
  const secret = join(dir, SECRETS_DIR, `${path}-webhook-${option === 'publicKey' ? 'public-key' : 'secret'}`);
  writeSecretFile(secret, value);
  item[option] = fileRef(secret, dir);
  notes.push(
    values.secret === undefined
      ? `secret: a new random one, written to ${secret} (mode 0600): give the provider this value (cat ${secret})`
      : `${option} written to ${secret} (mode 0600)`,
  );
  return item;
}

/** What is left to do on the provider's side, from the preset's own steps when it has them. */
function steps(entry: CatalogEntry, url: string, values: Values): string[] {
  const own = entry.def.setup?.map((s) => s.replaceAll('{url}', url));
  const out = ['On the provider’s side:', ...(own ?? [`Webhook URL: ${url}`]).map((s) => `  - ${s}`)];
  if (!entry.def.verify)
    out.push('  - Authentication: send the hook token as "Authorization: Bearer <token>" (docs/http.md, "Authentication")');
  if (values.events) out.push(`  - Events to send (the others would be answered 204): ${values.events.replaceAll(',', ', ')}`);
  if (!values.url) out.push('(--url BASE puts your public address in the URL above)');
  out.push(`More: docs/presets/${entry.name}.md; hook-intake presets show ${entry.name}`);
  return out;
}

function secretFile(edit: ConfigEditor, path: string[], name: string, value: string, dir: string): string {
  const file = join(dir, SECRETS_DIR, name);
  writeSecretFile(file, value);
  edit.set(path, fileRef(file, dir));
  return file;
}
