/**
 * Resolves `${ENV_NAME}` references in string values and `{ file: "path" }`
 * secrets, before schema validation. Errors carry the key path.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ConfigIssue } from '../errors.ts';

const ENV_REF = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export interface InterpolateOptions {
  file: string;
  /** Directory that relative `{file}` paths resolve against (the config file's). */
  baseDir: string;
  env: Record<string, string | undefined>;
}

/** Key paths under which `{file: …}` objects are data, not secrets (match rules compare them). */
function isDataSubtree(path: readonly (string | number)[]): boolean {
  const i = path.indexOf('match');
  return i > 0 && path[i - 2] === 'mappings';
}

export function formatPath(path: readonly (string | number)[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(seg)) out += out ? `.${seg}` : seg;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/** Returns a new tree with references resolved; problems are pushed to `issues`. */
export function interpolate(value: unknown, opts: InterpolateOptions, issues: ConfigIssue[]): unknown {
  const walk = (v: unknown, path: (string | number)[]): unknown => {
    if (typeof v === 'string') return v.includes('$') ? substitute(v, path) : v;
    if (Array.isArray(v)) return v.map((item, i) => walk(item, [...path, i]));
    if (v && typeof v === 'object') {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === 'file' && typeof (v as { file: unknown }).file === 'string' && !isDataSubtree(path)) {
        const file = (v as { file: string }).file;
        // the path is a string value like any other: `{file: "${CREDENTIALS_DIRECTORY}/token"}`
        return readSecret(file.includes('$') ? substitute(file, [...path, 'file']) : file, path);
      }
      const out: Record<string, unknown> = {};
      for (const k of keys) out[k] = walk((v as Record<string, unknown>)[k], [...path, k]);
      return out;
    }
    return v;
  };

  const substitute = (s: string, path: (string | number)[]): string =>
    s.replace(ENV_REF, (_whole, name: string | undefined) => {
      if (name === undefined) return '${'; // `$${` escapes a literal `${`
      const val = opts.env[name];
      if (val === undefined) {
        issues.push({ file: opts.file, path: formatPath(path), message: `environment variable ${name} is not set` });
        return '';
      }
      return val;
    });

  const readSecret = (rel: string, path: (string | number)[]): string | undefined => {
    const p = resolve(opts.baseDir, rel);
    try {
      const text = readFileSync(p, 'utf8').replace(/\r?\n$/, '');
      if (!text) issues.push({ file: opts.file, path: formatPath(path), message: `secret file ${p} is empty` });
      return text;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      issues.push({ file: opts.file, path: formatPath(path), message: `cannot read secret file ${p} (${code})` });
      return undefined;
    }
  };

  return walk(value, []);
}
