/**
 * The shared Ajv setup: config-like schemas get every problem and their
 * defaults, request bodies stop at their first problem.
 */
import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { codePoints, compile, compileBody } from '../../src/config/ajv.ts';
import { Rule } from '../../src/config/schema.ts';

const Slice = Type.Object(
  { name: Type.String(), port: Type.Optional(Type.Number({ default: 8080 })), retries: Type.Optional(Type.Integer({ minimum: 0 })) },
  { additionalProperties: false },
);

describe('compile()', () => {
  it('reports every problem at once and fills defaults in place', () => {
    const check = compile(Slice);
    expect(check({ retries: -1, extra: true })).toBe(false);
    expect(check.errors!.map((e) => e.keyword).sort()).toEqual(['additionalProperties', 'minimum', 'required']);
    const ok: Record<string, unknown> = { name: 'a' };
    expect(check(ok)).toBe(true);
    expect(ok).toEqual({ name: 'a', port: 8080 });
  });

  it("resolves references to the config's shared schemas", () => {
    const check = compile(Type.Object({ when: Type.Ref(Rule) }));
    expect(check({ when: { regex: '^a' } })).toBe(true);
    expect(check({ when: { regex: '' } })).toBe(false);
  });
});

describe('compileBody()', () => {
  it('stops at the first problem: a body of many unknown keys yields one error', () => {
    const check = compileBody(Type.Object({ text: Type.String() }, { additionalProperties: false }));
    const body: Record<string, unknown> = { text: 'x' };
    for (let i = 0; i < 1000; i++) body[`k${i}`] = i;
    expect(check(body)).toBe(false);
    expect(check.errors).toHaveLength(1);
    expect(check.errors![0]!.params).toEqual({ additionalProperty: 'k0' });
  });

  it('fills no defaults', () => {
    const body: Record<string, unknown> = { name: 'a' };
    expect(compileBody(Slice)(body)).toBe(true);
    expect(body).toEqual({ name: 'a' });
  });
});

describe('maxChars', () => {
  const check = compileBody(
    Type.Object({ text: Type.String({ maxChars: 3 }), n: Type.Optional(Type.Number()) }, { additionalProperties: false }),
  );
  const plain = compileBody(
    Type.Object({ text: Type.String({ maxLength: 3 }), n: Type.Optional(Type.Number()) }, { additionalProperties: false }),
  );

  it('counts characters as maxLength does: a pair of surrogates is one', () => {
    for (const text of ['abc', 'abcd', '😀😀😀', '😀😀😀😀', 'a😀b', '\ud83d\ud83d\ud83d', '\ud83dab', '\ude00\ude00\ude00\ude00']) {
      expect(check({ text }), text).toBe(plain({ text }));
    }
  });

  it('fails with the error maxLength gives, at the same field', () => {
    expect(check({ text: 'abcd' })).toBe(false);
    expect(plain({ text: 'abcd' })).toBe(false);
    const pick = (e: { keyword: string; instancePath: string; params: unknown }) => ({
      keyword: e.keyword,
      instancePath: e.instancePath,
      params: e.params,
    });
    expect(pick(check.errors![0]!)).toEqual(pick(plain.errors![0]!));
  });

  it('comes in the same order among the other checks', () => {
    expect(check({ text: 'abcd', n: 'x' })).toBe(false);
    expect(check.errors![0]!.instancePath).toBe('/text');
    expect(check({ text: 'abcd', extra: 1 })).toBe(false);
    expect(check.errors![0]!.keyword).toBe('additionalProperties');
  });

  it('codePoints() is the length of the string as an array of code points', () => {
    for (const s of ['', 'a', '😀', '\ud83d', '\ude00\ud83d', 'x😀\ud83d😀', '\ud83d\ude00\ude00'])
      expect(codePoints(s), JSON.stringify(s)).toBe([...s].length);
  });
});
