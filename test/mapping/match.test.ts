/**
 * Match specs (docs/mappings.md, "Match"): every rule kind and combinator, compiled once;
 * `test` and `explain` always agree, and `explain` says why a match failed.
 */
import { describe, expect, it } from 'vitest';
import type { MatchConfig, RuleConfig } from '../../src/config/schema.ts';
import { compileMatch, MatchError, trimSlashes, type MatchInput } from '../../src/mapping/match.ts';

const input: MatchInput = {
  name: 'github',
  headers: { 'x-github-event': 'issues', 'x-count': '5', 'x-multi': ['a', 'b'] },
  payload: {
    source: 'form',
    action: 'opened',
    number: 42,
    draft: false,
    nothing: null,
    labels: { severity: 'critical' },
    tags: ['x', 'y'],
    pull_request: { merged: true, head: { ref: 'feature/x' } },
  },
};

/** Runs both forms and checks they agree; returns the explanation (undefined = match). */
function run(spec: MatchConfig | undefined, on: MatchInput = input): { matched: boolean; why: string | undefined } {
  const m = compileMatch(spec);
  const matched = m.test(on);
  const why = m.explain(on);
  expect(why === undefined, `test() said ${matched}, explain() said ${JSON.stringify(why)}`).toBe(matched);
  return { matched, why };
}

const payloadRule = (path: string, rule: RuleConfig) => run({ payload: { [path]: rule } }).matched;
const headerRule = (name: string, rule: RuleConfig) => run({ headers: { [name]: rule } }).matched;

describe('compileMatch()', () => {
  describe('catch-all', () => {
    it.each([
      ['no match at all', undefined],
      ['an empty match', {}],
    ])('%s matches every request', (_what, spec) => {
      expect(run(spec).matched).toBe(true);
      expect(run(spec, { name: 'anything', headers: {}, payload: null }).matched).toBe(true);
    });
  });

  describe('path', () => {
    it.each([
      ['github', true],
      ['/github', true],
      ['github/', true],
      ['//github//', true],
      ['gitlab', false],
      ['git', false],
      ['GitHub', false],
    ])('path %j against "github" → %s', (path, matched) => {
      expect(run({ path }).matched).toBe(matched);
    });

    it('compares names with a slash inside', () => {
      expect(run({ path: '/ci/build/' }, { ...input, name: 'ci/build' }).matched).toBe(true);
    });

    it('explains a different path', () => {
      expect(run({ path: 'gitlab' }).why).toBe('match.path: wants "gitlab", got "github"');
    });

    it('refuses a path of only slashes', () => {
      expect(() => compileMatch({ path: '/' })).toThrow(MatchError);
      try {
        compileMatch({ path: '//' });
      } catch (err) {
        expect((err as MatchError).path).toBe('match.path');
        expect((err as MatchError).message).toContain('must name a hook');
      }
    });
  });

  describe('source', () => {
    it('compares payload.source', () => {
      expect(run({ source: 'form' }).matched).toBe(true);
      expect(run({ source: 'gmail' }).why).toBe('match.source: wants payload.source "gmail", got "form"');
      expect(run({ source: 'form' }, { ...input, payload: [] }).why).toBe('match.source: wants payload.source "form", got missing');
    });
  });

  describe('payload rules', () => {
    it.each<[string, string, RuleConfig, boolean]>([
      ['a string literal', 'action', 'opened', true],
      ['a different string', 'action', 'closed', false],
      ['a number literal', 'number', 42, true],
      ['a number against its string form', 'number', '42', false],
      ['a boolean literal', 'draft', false, true],
      ['a null literal', 'nothing', null, true],
      ['null against a missing value', 'missing', null, false],
      ['a nested path', 'labels.severity', 'critical', true],
      ['an index path', 'tags[1]', 'y', true],
      ['a deep path', 'pull_request.head.ref', 'feature/x', true],
      ['equals an object', 'labels', { equals: { severity: 'critical' } }, true],
      ['equals an array', 'tags', { equals: ['x', 'y'] }, true],
      ['equals an array in another order', 'tags', { equals: ['y', 'x'] }, false],
      ['equals a scalar', 'number', { equals: 42 }, true],
      ['exists: present', 'action', { exists: true }, true],
      ['exists: present though null', 'nothing', { exists: true }, true],
      ['exists: missing', 'missing', { exists: true }, false],
      ['exists false: missing', 'missing', { exists: false }, true],
      ['exists false: present', 'action', { exists: false }, false],
      ['in: one of strings', 'action', { in: ['opened', 'reopened'] }, true],
      ['in: none of strings', 'action', { in: ['closed', 'reopened'] }, false],
      ['in: by strict type', 'number', { in: ['42'] }, false],
      ['in: numbers', 'number', { in: [41, 42] }, true],
      ['in: with objects', 'labels', { in: ['x', { severity: 'critical' }] }, true],
      ['in: missing value', 'missing', { in: ['opened'] }, false],
      ['regex on a string', 'action', { regex: '^open' }, true],
      ['regex not matching', 'action', { regex: '^close' }, false],
      ['regex with flags', 'labels.severity', { regex: '^CRIT', flags: 'i' }, true],
      ['regex case-sensitive without flags', 'labels.severity', { regex: '^CRIT' }, false],
      ['regex on a number', 'number', { regex: '^4\\d$' }, true],
      ['regex on a boolean', 'draft', { regex: '^false$' }, true],
      ['regex on an object', 'labels', { regex: '.*' }, false],
      ['regex on a missing value', 'missing', { regex: '.*' }, false],
      ['regex on null', 'nothing', { regex: 'null' }, false],
      ['all: every rule passes', 'action', { all: [{ regex: '^o' }, { regex: 'd$' }] }, true],
      ['all: one rule fails', 'action', { all: [{ regex: '^o' }, { regex: 'x$' }] }, false],
      ['any: one rule passes', 'action', { any: ['closed', 'opened'] }, true],
      ['any: no rule passes', 'action', { any: ['closed', { regex: '^x' }] }, false],
      ['not: inner fails', 'action', { not: 'closed' }, true],
      ['not: inner passes', 'action', { not: 'opened' }, false],
      ['not exists: missing', 'missing', { not: { exists: true } }, true],
      ['nested combinators', 'action', { all: [{ not: { in: ['closed', 'deleted'] } }, { any: [{ regex: '^op' }, 'x'] }] }, true],
    ])('%s', (_what, path, rule, matched) => {
      expect(payloadRule(path, rule)).toBe(matched);
    });

    it('passes only when every rule passes', () => {
      expect(run({ payload: { action: 'opened', number: 42 } }).matched).toBe(true);
      expect(run({ payload: { action: 'opened', number: 41 } }).why).toBe('match.payload["number"]: wants a value that equals 41, got 42');
    });

    it.each<[string, string, RuleConfig, string]>([
      ['a literal', 'action', 'closed', 'equals "closed", got "opened"'],
      ['exists', 'missing', { exists: true }, 'exists, got missing'],
      ['exists false', 'action', { exists: false }, 'is absent, got "opened"'],
      ['in', 'action', { in: ['a', 'b'] }, 'is one of ["a","b"], got "opened"'],
      ['regex', 'action', { regex: '^x', flags: 'i' }, 'matches /^x/i, got "opened"'],
      ['all', 'action', { all: ['opened', { regex: 'b' }] }, 'equals "opened" and matches /b/, got "opened"'],
      ['any', 'number', { any: [1, 2] }, '(equals 1 or equals 2), got 42'],
      ['not', 'action', { not: { in: ['opened'] } }, 'not (is one of ["opened"]), got "opened"'],
    ])('explains %s with the rule and the value', (_what, path, rule, because) => {
      expect(run({ payload: { [path]: rule } }).why).toBe(`match.payload[${JSON.stringify(path)}]: wants a value that ${because}`);
    });

    it('reads own properties only: an inherited property is missing', () => {
      const payload = Object.create({ inherited: 'yes' }) as Record<string, unknown>;
      expect(run({ payload: { inherited: { exists: true } } }, { ...input, payload }).matched).toBe(false);
      expect(run({ payload: { inherited: { exists: false } } }, { ...input, payload }).matched).toBe(true);
      expect(run({ payload: { toString: { exists: true } } }, { ...input, payload: {} }).matched).toBe(false);
    });
  });

  describe('header rules', () => {
    it.each<[string, string, RuleConfig, boolean]>([
      ['a literal', 'x-github-event', 'issues', true],
      ['a name in any case', 'X-GitHub-Event', 'issues', true],
      ['a different value', 'x-github-event', 'push', false],
      ['a number literal against its text', 'x-count', 5, true],
      ['in with numbers against text', 'x-count', { in: [4, 5] }, true],
      ['in with strings', 'x-github-event', { in: ['issues', 'pull_request'] }, true],
      ['a repeated header, joined', 'x-multi', 'a, b', true],
      ['a literal against a missing header', 'x-missing', 'issues', false],
      ['exists', 'x-github-event', { exists: true }, true],
      ['exists on a missing header', 'x-missing', { exists: true }, false],
      ['exists false on a missing header', 'x-missing', { exists: false }, true],
      ['regex', 'x-github-event', { regex: '^(issues|pull_request)$' }, true],
      ['not', 'x-github-event', { not: 'push' }, true],
    ])('%s', (_what, name, rule, matched) => {
      expect(headerRule(name, rule)).toBe(matched);
    });

    it('explains with the lower-case name as written and the value', () => {
      expect(run({ headers: { 'X-GitHub-Event': 'push' } }).why).toBe(
        'match.headers["X-GitHub-Event"]: wants a value that equals "push", got "issues"',
      );
    });

    it('never reads an inherited property as a header', () => {
      const headers = Object.create({ 'x-inherited': 'yes' }) as Record<string, string>;
      expect(run({ headers: { 'x-inherited': { exists: true } } }, { ...input, headers }).matched).toBe(false);
      // request headers are a plain object: Object.prototype's members are not headers
      expect(run({ headers: { hasOwnProperty: { exists: true } } }, { ...input, headers: {} }).matched).toBe(false);
      expect(run({ headers: { tostring: { exists: false } } }, { ...input, headers: {} }).matched).toBe(true);
    });
  });

  describe('combinators over whole specs', () => {
    it.each<[string, MatchConfig, boolean]>([
      ['all: every part passes', { all: [{ path: 'github' }, { headers: { 'x-github-event': 'issues' } }] }, true],
      ['all: one part fails', { all: [{ path: 'github' }, { payload: { action: 'closed' } }] }, false],
      ['any: one part passes', { any: [{ path: 'gitlab' }, { source: 'form' }] }, true],
      ['any: no part passes', { any: [{ path: 'gitlab' }, { source: 'gmail' }] }, false],
      ['not: inner fails', { not: { payload: { draft: true } } }, true],
      ['not: inner passes', { not: { path: 'github' } }, false],
      ['path and a nested any', { path: 'github', any: [{ payload: { action: 'opened' } }, { payload: { action: 'reopened' } }] }, true],
      ['not of an empty spec never matches', { not: {} }, false],
    ])('%s', (_what, spec, matched) => {
      expect(run(spec).matched).toBe(matched);
    });

    it('explains with the path of the part that failed', () => {
      expect(run({ all: [{ path: 'github' }, { payload: { action: 'closed' } }] }).why).toBe(
        'match.all[1].payload["action"]: wants a value that equals "closed", got "opened"',
      );
      expect(run({ any: [{ path: 'gitlab' }, { source: 'gmail' }] }).why).toBe(
        'match.any: none passed (match.any[0].path: wants "gitlab", got "github"; match.any[1].source: wants payload.source "gmail", got "form")',
      );
      expect(run({ not: { path: 'github' } }).why).toBe('match.not: the inner match passed');
    });

    it('reports the first failing part, in the order path, source, headers, payload', () => {
      expect(run({ path: 'gitlab', source: 'gmail', headers: { 'x-github-event': 'push' }, payload: { action: 'closed' } }).why).toMatch(
        /^match\.path:/,
      );
      expect(run({ path: 'github', source: 'gmail', payload: { action: 'closed' } }).why).toMatch(/^match\.source:/);
      expect(run({ path: 'github', headers: { 'x-github-event': 'push' }, payload: { action: 'closed' } }).why).toMatch(/^match\.headers/);
    });
  });

  describe('errors at load', () => {
    const errorOf = (spec: MatchConfig, where?: string): MatchError => {
      try {
        compileMatch(spec, where);
      } catch (err) {
        expect(err).toBeInstanceOf(MatchError);
        return err as MatchError;
      }
      throw new Error('expected a MatchError');
    };

    it.each<[string, MatchConfig, string, RegExp]>([
      ['an invalid regex', { payload: { action: { regex: '(' } } }, 'match.payload["action"].regex', /invalid regular expression/],
      [
        'invalid regex flags',
        { payload: { action: { regex: 'x', flags: 'ii' } } },
        'match.payload["action"].regex',
        /invalid regular expression/,
      ],
      [
        'an invalid regex inside all',
        { payload: { action: { all: ['x', { regex: '[' }] } } },
        'match.payload["action"].all[1].regex',
        /invalid/,
      ],
      ['an invalid regex inside any', { headers: { 'x-a': { any: [{ regex: '(?<' }] } } }, 'match.headers["x-a"].any[0].regex', /invalid/],
      ['an invalid regex inside not', { payload: { a: { not: { regex: '+' } } } }, 'match.payload["a"].not.regex', /invalid/],
      [
        'an invalid regex in a nested spec',
        { any: [{ path: 'x' }, { all: [{ payload: { a: { regex: ')' } } }] }] },
        'match.any[1].all[0].payload["a"].regex',
        /invalid/,
      ],
      ['a bad payload path', { payload: { 'a..b': 'x' } }, 'match.payload["a..b"]', /unexpected/],
      [
        'a prototype segment in a payload path',
        { payload: { 'a.__proto__': { exists: true } } },
        'match.payload["a.__proto__"]',
        /"__proto__" is not allowed/,
      ],
      [
        'a quoted prototype segment',
        { payload: { 'a["constructor"]': 'x' } },
        'match.payload["a[\\"constructor\\"]"]',
        /"constructor" is not allowed/,
      ],
      ['a prototype header name', { headers: { Constructor: { exists: true } } }, 'match.headers["Constructor"]', /is not allowed/],
      ['prototype as a header name', { headers: { 'x-ok': 'a', prototype: 'b' } }, 'match.headers["prototype"]', /is not allowed/],
      ['an unknown rule', { payload: { a: { like: 'x' } as unknown as RuleConfig } }, 'match.payload["a"]', /unknown rule/],
    ])('%s, naming where it is', (_what, spec, path, message) => {
      const err = errorOf(spec);
      expect(err.path).toBe(path);
      expect(err.message).toMatch(message);
    });

    it('prefixes paths with the given location', () => {
      expect(errorOf({ payload: { a: { regex: '(' } } }, 'mappings[2].match').path).toBe('mappings[2].match.payload["a"].regex');
    });
  });

  it('compiles each regex once, not per request', () => {
    const Original = RegExp;
    let made = 0;
    const Counting = function (this: unknown, ...args: ConstructorParameters<typeof RegExp>) {
      made++;
      return new Original(...args);
    } as unknown as RegExpConstructor;
    globalThis.RegExp = Counting;
    let m;
    try {
      m = compileMatch({ payload: { action: { regex: '^op' } } });
    } finally {
      globalThis.RegExp = Original;
    }
    expect(made).toBe(1);
    globalThis.RegExp = Counting;
    try {
      for (let i = 0; i < 5; i++) m.test(input);
      m.explain({ ...input, payload: {} });
    } finally {
      globalThis.RegExp = Original;
    }
    expect(made).toBe(1);
  });
});

describe('trimSlashes()', () => {
  it.each([
    ['/a/', 'a'],
    ['a', 'a'],
    ['//a/b//', 'a/b'],
    ['/', ''],
  ])('%j → %j', (s, out) => {
    expect(trimSlashes(s)).toBe(out);
  });
});
