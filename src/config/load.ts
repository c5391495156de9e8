/**
 * Loading a config file: find it, parse JSON5 or YAML, resolve `${ENV}` and
 * `{file}` secrets, validate against the schema (filling defaults), then apply
 * the rules a schema cannot express. Pure apart from reading files.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import JSON5 from 'json5';
import { createRequire } from 'node:module';
import type { Node as YamlNode } from 'yaml';
import { ConfigError, type ConfigIssue } from '../errors.ts';
import { interpolate } from './interpolate.ts';
import { validateConfig } from './validate.ts';
import { applyRules } from './rules.ts';
import type { Config } from './schema.ts';

export const DEFAULT_CONFIG_FILE = 'hook-intake.json5';

export interface LoadOptions {
  /** Explicit file (`--config`); when absent: env `HOOK_INTAKE_CONFIG`, then `./hook-intake.json5`, then embedded defaults. */
  file?: string | undefined;
  cwd?: string;
  env?: Record<string, string | undefined>;
  /** Data directory (`--data`), used for the default storage path. */
  dataDir?: string;
  /**
   * Supplies a token the config does not set: `serve` reads or generates one
   * in the data dir; `check` only reads. Called only when the token is needed.
   */
  tokenFallback?: (kind: 'hooks' | 'gateway') => string | undefined;
  /**
   * Reads only these top-level sections of the file; the others take their defaults. For a command
   * that needs a part of the config (`prune`: storage and retention), so that an unset `${ENV}` or a
   * mistake elsewhere does not stop it.
   */
  only?: readonly string[];
}

export interface LoadedConfig {
  /** Absolute path of the file, or undefined when running on embedded defaults. */
  file: string | undefined;
  /** Directory relative paths in the config resolve against. */
  dir: string;
  config: Config;
  /** Non-fatal remarks (weak token, deprecated settings). */
  warnings: string[];
  /** Which tokens came from the fallback instead of the file. */
  fallbackTokens: ('hooks' | 'gateway')[];
}

/**
 * The YAML parser, loaded on first use: only YAML configurations need it, so a process that never
 * reads one does not hold it (measured: docs/performance.md, "Memory"). `require`, not `import()`: parsing
 * is synchronous.
 */
let yamlModule: typeof import('yaml') | undefined;
const yaml = (): typeof import('yaml') => (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof import('yaml'));

/** Locates the config file the way `serve` and `check` do. */
export function findConfigFile(opts: LoadOptions): string | undefined {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  if (opts.file) return resolve(cwd, opts.file);
  if (env.HOOK_INTAKE_CONFIG) return resolve(cwd, env.HOOK_INTAKE_CONFIG);
  const def = resolve(cwd, DEFAULT_CONFIG_FILE);
  return existsSync(def) ? def : undefined;
}

/** Parses config text; syntax errors become issues with the line. */
export function parseConfigText(
  text: string,
  file: string,
): { data?: unknown; issues: ConfigIssue[]; lineOf?: (path: (string | number)[]) => number | undefined } {
  const ext = extname(file).toLowerCase();
  if (ext === '.yaml' || ext === '.yml') {
    const doc = yaml().parseDocument(text, { prettyErrors: false, uniqueKeys: true });
    const starts = lineStarts(text);
    if (doc.errors.length) {
      // without prettyErrors the parser leaves linePos unset; the offset is always there
      return {
        issues: doc.errors.map((e) => ({ file, path: '', message: `YAML: ${e.message.split('\n')[0]}`, line: lineAt(starts, e.pos[0]) })),
      };
    }
    const lineOf = (path: (string | number)[]) => {
      const range = (doc.getIn(path, true) as YamlNode | undefined)?.range;
      return range ? lineAt(starts, range[0]) : undefined;
    };
    return { data: doc.toJS(), issues: [], lineOf };
  }
  try {
    return { data: JSON5.parse(text), issues: [] };
  } catch (err) {
    const e = err as Error & { lineNumber?: number };
    return { issues: [{ file, path: '', message: `JSON5: ${e.message.replace(/^JSON5: /, '')}`, line: e.lineNumber }] };
  }
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}
function lineAt(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** Loads and validates. Throws `ConfigError` listing every problem found. */
export function loadConfig(opts: LoadOptions = {}): LoadedConfig {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  const file = findConfigFile(opts);
  let raw: unknown = {};
  let lineOf: ((path: (string | number)[]) => number | undefined) | undefined;
  const label = file ?? '(embedded defaults)';

  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError([{ file, path: '', message: `cannot read config file (${(err as NodeJS.ErrnoException).code ?? err})` }]);
    }
    const parsed = parseConfigText(text, file);
    if (parsed.issues.length) throw new ConfigError(parsed.issues);
    raw = parsed.data ?? {};
    lineOf = parsed.lineOf;
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
      throw new ConfigError([{ file, path: '', message: 'the config must be an object at the top level' }]);
    }
    if (opts.only) {
      const whole = raw as Record<string, unknown>;
      raw = Object.fromEntries(opts.only.filter((k) => Object.hasOwn(whole, k)).map((k) => [k, whole[k]]));
    }
  }

  const dir = file ? dirname(file) : cwd;
  const issues: ConfigIssue[] = [];
  const data = interpolate(raw, { file: label, baseDir: dir, env }, issues) as Record<string, unknown>;
  if (issues.length) throw new ConfigError(withLines(issues, lineOf));

  const fallbackTokens: ('hooks' | 'gateway')[] = [];
  fillToken(data, 'hooks', opts, fallbackTokens);
  fillToken(data, 'gateway', opts, fallbackTokens);

  const { config, issues: schemaIssues } = validateConfig(data, label);
  if (!config) throw new ConfigError(withLines(schemaIssues, lineOf));

  const warnings: string[] = [];
  const ruleIssues = applyRules(config, { file: label, dir, cwd, dataDir: resolve(cwd, opts.dataDir ?? 'data'), warnings });
  if (ruleIssues.length) throw new ConfigError(withLines(ruleIssues, lineOf));
  return { file, dir, config, warnings, fallbackTokens };
}

/** Inserts a fallback token only where the config leaves it unset but needs one. */
function fillToken(data: Record<string, unknown>, kind: 'hooks' | 'gateway', opts: LoadOptions, used: ('hooks' | 'gateway')[]) {
  if (!opts.tokenFallback) return;
  // only an absent section is created; a null or mistyped one is left for the schema to report
  if (data[kind] === undefined) data[kind] = {};
  const section = data[kind] as Record<string, unknown>;
  if (typeof section !== 'object' || section === null) return;
  if (kind === 'hooks') {
    if (section.enabled !== true || section.token !== undefined) return;
    const t = opts.tokenFallback('hooks');
    if (t) {
      section.token = t;
      used.push('hooks');
    }
  } else {
    if (section.auth === undefined) section.auth = {};
    const auth = section.auth as Record<string, unknown>;
    if (typeof auth !== 'object' || auth === null || auth.token !== undefined) return;
    const t = opts.tokenFallback('gateway');
    if (t) {
      auth.token = t;
      used.push('gateway');
    }
  }
}

function withLines(issues: ConfigIssue[], lineOf: ((path: (string | number)[]) => number | undefined) | undefined): ConfigIssue[] {
  if (!lineOf) return issues;
  return issues.map((i) => {
    if (i.line || !i.path) return i;
    const segs = i.path.match(/[^.[\]"]+/g)?.map((s) => (/^\d+$/.test(s) ? Number(s) : s)) ?? [];
    const line = lineOf(segs);
    return line ? { ...i, line } : i;
  });
}

/**
 * A configuration made in code rather than read from a file (what `hook-intake presets show` runs its
 * sample on): validated, defaulted and checked like a file's. Throws `ConfigError`.
 */
export function configFromData(data: Record<string, unknown>, dir: string, label: string): LoadedConfig {
  const { config, issues } = validateConfig(structuredClone(data), label);
  if (!config) throw new ConfigError(issues);
  const warnings: string[] = [];
  const ruleIssues = applyRules(config, { file: label, dir, cwd: dir, dataDir: resolve(dir, 'data'), warnings });
  if (ruleIssues.length) throw new ConfigError(ruleIssues);
  return { file: undefined, dir, config, warnings, fallbackTokens: [] };
}
