/**
 * Match specs (docs/mappings.md, "Match") compiled once into predicates: a closed set of rule
 * kinds (literal, equals, exists, in, regex, all, any, not) — rules as data, no
 * expression language. Regexes are compiled at load; an invalid one is a load
 * error naming where it is.
 *
 * Each compiled matcher has two forms: `test` for the request path (a boolean,
 * nothing allocated on failure) and `explain` for `hook-intake try` (the first
 * reason it fails, or undefined when it passes).
 */
import { isDeepStrictEqual } from 'node:util';
import type { MatchConfig, RuleConfig } from '../config/schema.ts';
import { FORBIDDEN_SEGMENTS, getPath, parsePath, type Segment } from './path.ts';

export interface MatchInput {
  /** Hook name after the prefix, without surrounding `/`. */
  name: string;
  payload: unknown;
  /** Lower-case header names. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

export interface Matcher {
  test(input: MatchInput): boolean;
  explain(input: MatchInput): string | undefined;
}

/** A problem in a match spec, with the key path inside the mapping (e.g. `match.payload.action.regex`). */
export class MatchError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(message);
    this.path = path;
  }
}

interface RuleFn {
  test(v: unknown): boolean;
  describe(): string;
}

const show = (v: unknown) => (v === undefined ? 'missing' : (JSON.stringify(v)?.slice(0, 80) ?? String(v)));

/** Strips surrounding slashes, as hook names are compared (docs/mappings.md, "Match"). */
export const trimSlashes = (s: string) => s.replace(/^\/+|\/+$/g, '');

function compileRule(rule: RuleConfig, where: string, isHeader: boolean): RuleFn {
  if (rule === null || typeof rule !== 'object') {
    const lit = rule;
    return isHeader
      ? { test: (v) => v !== undefined && String(v) === String(lit), describe: () => `equals ${show(String(lit))}` }
      : { test: (v) => v === lit, describe: () => `equals ${show(lit)}` };
  }
  if ('equals' in rule) {
    const want = rule.equals;
    return { test: (v) => isDeepStrictEqual(v, want), describe: () => `equals ${show(want)}` };
  }
  if ('exists' in rule) {
    const want = rule.exists;
    return { test: (v) => (v !== undefined) === want, describe: () => (want ? 'exists' : 'is absent') };
  }
  if ('in' in rule) {
    const options = rule.in;
    const prims = options.every((o) => o === null || typeof o !== 'object') ? new Set(isHeader ? options.map(String) : options) : undefined;
    return {
      test: (v) => (prims ? prims.has(isHeader && v !== undefined ? String(v) : v) : options.some((o) => isDeepStrictEqual(v, o))),
      describe: () => `is one of ${show(options)}`,
    };
  }
  if ('regex' in rule) {
    let re: RegExp;
    try {
      re = new RegExp(rule.regex, rule.flags ?? '');
    } catch (err) {
      throw new MatchError(`${where}.regex`, `invalid regular expression: ${(err as Error).message}`);
    }
    return {
      test: (v) => (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? re.test(String(v)) : false),
      describe: () => `matches /${rule.regex}/${rule.flags ?? ''}`,
    };
  }
  if ('all' in rule) {
    const parts = rule.all.map((r, i) => compileRule(r, `${where}.all[${i}]`, isHeader));
    return { test: (v) => parts.every((p) => p.test(v)), describe: () => parts.map((p) => p.describe()).join(' and ') };
  }
  if ('any' in rule) {
    const parts = rule.any.map((r, i) => compileRule(r, `${where}.any[${i}]`, isHeader));
    return { test: (v) => parts.some((p) => p.test(v)), describe: () => `(${parts.map((p) => p.describe()).join(' or ')})` };
  }
  if ('not' in rule) {
    const inner = compileRule(rule.not, `${where}.not`, isHeader);
    return { test: (v) => !inner.test(v), describe: () => `not (${inner.describe()})` };
  }
  throw new MatchError(where, 'unknown rule');
}

type Check = { test(input: MatchInput): boolean; why(input: MatchInput): string };

function compileChecks(spec: MatchConfig, where: string): Check[] {
  const checks: Check[] = [];
  if (spec.path !== undefined) {
    const want = trimSlashes(spec.path);
    if (!want) throw new MatchError(`${where}.path`, 'must name a hook (not only "/")');
    checks.push({ test: (i) => i.name === want, why: (i) => `${where}.path: wants "${want}", got "${i.name}"` });
  }
  if (spec.source !== undefined) {
    const want = spec.source;
    const get = (i: MatchInput) => getPath(i.payload, ['source']);
    checks.push({ test: (i) => get(i) === want, why: (i) => `${where}.source: wants payload.source "${want}", got ${show(get(i))}` });
  }
  for (const [field, isHeader] of [
    ['headers', true],
    ['payload', false],
  ] as const) {
    const rules = spec[field];
    if (!rules) continue;
    for (const [key, rule] of Object.entries(rules)) {
      const rulePath = `${where}.${field}[${JSON.stringify(key)}]`;
      let segs: Segment[] | undefined;
      let header: string | undefined;
      if (isHeader) {
        header = key.toLowerCase();
        if (FORBIDDEN_SEGMENTS.has(header)) throw new MatchError(rulePath, `"${key}" is not allowed in a path`);
      } else {
        try {
          segs = parsePath(key);
        } catch (err) {
          throw new MatchError(rulePath, (err as Error).message);
        }
      }
      const r = compileRule(rule, rulePath, isHeader);
      const get = (i: MatchInput): unknown => {
        if (header === undefined) return getPath(i.payload, segs!);
        // own properties only: request headers are a plain object, so `constructor` would be inherited
        const v = Object.hasOwn(i.headers, header) ? i.headers[header] : undefined;
        return Array.isArray(v) ? v.join(', ') : v;
      };
      checks.push({ test: (i) => r.test(get(i)), why: (i) => `${rulePath}: wants a value that ${r.describe()}, got ${show(get(i))}` });
    }
  }
  if (spec.all) {
    const subs = spec.all.map((s, n) => compileMatchSpec(s, `${where}.all[${n}]`));
    checks.push({ test: (i) => subs.every((s) => s.test(i)), why: (i) => subs.map((s) => s.explain(i)).find(Boolean)! });
  }
  if (spec.any) {
    const subs = spec.any.map((s, n) => compileMatchSpec(s, `${where}.any[${n}]`));
    checks.push({
      test: (i) => subs.some((s) => s.test(i)),
      why: (i) => `${where}.any: none passed (${subs.map((s) => s.explain(i)).join('; ')})`,
    });
  }
  if (spec.not) {
    const sub = compileMatchSpec(spec.not, `${where}.not`);
    checks.push({ test: (i) => !sub.test(i), why: () => `${where}.not: the inner match passed` });
  }
  return checks;
}

function compileMatchSpec(spec: MatchConfig, where: string): Matcher {
  const checks = compileChecks(spec, where);
  if (checks.length === 1) {
    const c = checks[0]!;
    return { test: c.test, explain: (i) => (c.test(i) ? undefined : c.why(i)) };
  }
  return {
    test: (i) => {
      for (const c of checks) if (!c.test(i)) return false;
      return true;
    },
    explain: (i) => {
      for (const c of checks) if (!c.test(i)) return c.why(i);
      return undefined;
    },
  };
}

/** Compiles a mapping's `match`; no match at all is a catch-all. */
export function compileMatch(spec: MatchConfig | undefined, where = 'match'): Matcher {
  if (!spec || Object.keys(spec).length === 0) return { test: () => true, explain: () => undefined };
  return compileMatchSpec(spec, where);
}
