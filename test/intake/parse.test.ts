/**
 * Media types and body parsing (docs/http.md, "Order of checks" and "Form posts"): JSON only (plus form posts on the
 * built-in endpoints), UTF-8 only, and no prototype poisoning.
 */
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, mediaKind, parseForm, parseJson, parseNamedForm, requireIdentityEncoding } from '../../src/intake/parse.ts';
import { HookError } from '../../src/errors.ts';

function thrown(fn: () => unknown): HookError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HookError);
    return err as HookError;
  }
  throw new Error('expected a HookError');
}

describe('mediaKind()', () => {
  it.each([
    ['application/json', 'json'],
    ['application/json; charset=utf-8', 'json'],
    ['application/json;charset="UTF-8"', 'json'],
    ['application/json; charset=utf8', 'json'],
    ['Application/JSON', 'json'],
    ['application/vnd.github+json', 'json'],
    ['application/cloudevents+json; charset=utf-8', 'json'],
    ['application/x-www-form-urlencoded', 'form'],
    ['application/x-www-form-urlencoded; charset=UTF-8', 'form'],
  ])('%s → %s', (type, kind) => {
    expect(mediaKind(type)).toBe(kind);
  });

  it.each([
    [undefined, 'Content-Type is missing'],
    ['', 'Content-Type is missing'],
    ['text/plain', 'Content-Type "text/plain" is not supported'],
    ['text/json', 'Content-Type "text/json" is not supported'],
    ['application/jsonp', 'Content-Type "application/jsonp" is not supported'],
    ['multipart/form-data; boundary=x', 'Content-Type "multipart/form-data" is not supported'],
    ['application/xml', 'Content-Type "application/xml" is not supported'],
    ['application/json; charset=latin1', 'charset "latin1" is not supported'],
    ['application/json; charset=utf-16', 'charset "utf-16" is not supported'],
    ['application/x-www-form-urlencoded; charset=iso-8859-1', 'charset "iso-8859-1" is not supported'],
  ])('%j → 415 UNSUPPORTED_MEDIA_TYPE', (type, message) => {
    const err = thrown(() => mediaKind(type));
    expect(err).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    expect(err.message).toContain(message);
  });
});

describe('parseJson()', () => {
  it('parses an object, and values that validation refuses later', () => {
    expect(parseJson(Buffer.from('{"text":"hi","n":[1,2]}'))).toEqual({ text: 'hi', n: [1, 2] });
    expect(parseJson(Buffer.from('null'))).toBeNull();
    expect(parseJson(Buffer.from('"x"'))).toBe('x');
  });

  it('skips a UTF-8 byte order mark', () => {
    expect(parseJson(Buffer.from('\uFEFF{"a":1}'))).toEqual({ a: 1 });
  });

  it('keeps non-ASCII text intact', () => {
    expect(parseJson(Buffer.from('{"t":"Grüße ✓ 🎉"}'))).toEqual({ t: 'Grüße ✓ 🎉' });
  });

  it.each([
    ['an empty body', Buffer.alloc(0), 'invalid JSON body: the body is empty'],
    [
      'invalid UTF-8',
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
      'invalid JSON body: the body is not valid UTF-8',
    ],
    ['a truncated UTF-8 sequence', Buffer.from([0x22, 0xe2, 0x9c, 0x22]), 'invalid JSON body: the body is not valid UTF-8'],
  ])('refuses %s with 400 INVALID_JSON', (_what, body, message) => {
    expect(thrown(() => parseJson(body))).toMatchObject({ status: 400, code: 'INVALID_JSON', message });
  });

  it.each(['{"text": "x",}', '{text: "x"}', "{'a': 1}", '{"a": 1', '{"a": 1} trailing', '   ', `{"a": "${'x'.repeat(500)}" x}`])(
    'refuses %j with 400 INVALID_JSON and a short reason',
    (text) => {
      const err = thrown(() => parseJson(Buffer.from(text)));
      expect(err).toMatchObject({ status: 400, code: 'INVALID_JSON' });
      expect(err.message).toMatch(/^invalid JSON body: \S/);
      expect(err.message.length).toBeLessThanOrEqual('invalid JSON body: '.length + 120);
    },
  );

  it.each([
    ['__proto__ at the top', '{"__proto__": {"admin": true}}'],
    ['__proto__ deep inside', '{"a": {"b": [{"c": {"__proto__": {"admin": true}}}]}}'],
    ['__proto__ with escaped characters', '{"\\u005f_proto__": {"admin": true}}'],
    ['constructor.prototype', '{"constructor": {"prototype": {"admin": true}}}'],
    ['constructor.prototype deep inside', '{"x": [[{"constructor": {"prototype": {}}}]]}'],
    ['constructor with escaped characters', '{"\\u0063onstructor": {"prototype": {"admin": true}}}'],
    ['__proto__ spaced from its colon, after 100 KiB of text', `{"m": "${'x'.repeat(100 * 1024)}", "__proto__" : {"admin": true}}`],
  ])('refuses prototype poisoning (%s) with 400 INVALID_JSON', (_what, text) => {
    const err = thrown(() => parseJson(Buffer.from(text)));
    expect(err).toMatchObject({ status: 400, code: 'INVALID_JSON' });
    expect(err.message).toContain('forbidden key');
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('accepts an ordinary "constructor" key', () => {
    expect(parseJson(Buffer.from('{"constructor": {"name": "x"}}'))).toEqual({ constructor: { name: 'x' } });
  });

  it.each([
    ['an unexpected token', '{"a": SECRET_VALUE_123}'],
    ['a bare word', 'SECRET_VALUE_123'],
    ['a word after a string', '{"a":"x" SECRET_VALUE_123}'],
    ['a bare word that names the prototype', 'prototype_SECRET_VALUE_123'],
  ])('never repeats the body in the reason (%s)', (_what, text) => {
    const err = thrown(() => parseJson(Buffer.from(text)));
    expect(err).toMatchObject({ status: 400, code: 'INVALID_JSON' });
    expect(err.message).not.toContain('SECRET');
    expect(err.message).not.toContain('forbidden key');
  });

  it.each([
    ['arrays', (d: number) => `${'['.repeat(d)}1${']'.repeat(d)}`],
    ['objects', (d: number) => `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`],
    ['mixed, with brackets inside strings', (d: number) => `${'{"[{":['.repeat(d / 2)}"]}\\"]"${']}'.repeat(d / 2)}`],
  ])('accepts %s nested up to MAX_JSON_DEPTH and refuses one level more', (_what, make) => {
    expect(parseJson(Buffer.from(make(MAX_JSON_DEPTH)))).toBeTypeOf('object');
    const err = thrown(() => parseJson(Buffer.from(make(MAX_JSON_DEPTH + 2))));
    expect(err).toMatchObject({
      status: 400,
      code: 'INVALID_JSON',
      message: `invalid JSON body: nested deeper than ${MAX_JSON_DEPTH} levels`,
    });
  });

  it('counts depth, not brackets: many brackets in strings or side by side are accepted, one level too deep anywhere is not', () => {
    const many = MAX_JSON_DEPTH * 3;
    // more brackets than the depth limit, all inside strings
    expect(parseJson(Buffer.from(JSON.stringify({ text: '{['.repeat(many) })))).toEqual({ text: '{['.repeat(many) });
    // more objects than the depth limit, side by side
    expect((parseJson(Buffer.from(JSON.stringify(Array.from({ length: many }, (_, i) => ({ i }))))) as unknown[]).length).toBe(many);
    // the same, with one value nested a level too deep at the end
    const deep = `[${Array.from({ length: many }, (_, i) => `{"i":${i}}`).join(',')},${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}]`;
    expect(thrown(() => parseJson(Buffer.from(deep)))).toMatchObject({
      status: 400,
      code: 'INVALID_JSON',
      message: `invalid JSON body: nested deeper than ${MAX_JSON_DEPTH} levels`,
    });
  });

  it.each([
    ['arrays', (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`],
    ['objects with a key that triggers the poisoning scan', (d: number) => `${'{"a":'.repeat(d)}{"constructor":1}${'}'.repeat(d)}`],
  ])('survives 100,000 levels of nested %s: parsed, or refused as INVALID_JSON', (_what, make) => {
    const body = Buffer.from(make(100_000));
    try {
      expect(parseJson(body)).toBeTypeOf('object');
    } catch (err) {
      // a stack overflow must not escape as a 500
      expect(err).toBeInstanceOf(HookError);
      expect((err as HookError).code).toBe('INVALID_JSON');
    }
  });
});

describe('requireIdentityEncoding()', () => {
  it.each([undefined, '', 'identity', 'IDENTITY', ' identity , identity'])('accepts %j', (value) => {
    expect(() => requireIdentityEncoding(value)).not.toThrow();
  });

  it.each(['gzip', 'br', 'deflate', 'x-gzip', 'identity, gzip', 'zstd'])('refuses %j with 415 UNSUPPORTED_MEDIA_TYPE', (value) => {
    expect(thrown(() => requireIdentityEncoding(value))).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
  });

  it('accepts chunked transfer coding and refuses a compressing one before it', () => {
    expect(() => requireIdentityEncoding(undefined, 'chunked')).not.toThrow();
    expect(() => requireIdentityEncoding(undefined, 'Chunked')).not.toThrow();
    expect(thrown(() => requireIdentityEncoding(undefined, 'gzip, chunked'))).toMatchObject({
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    });
  });
});

describe('parseForm()', () => {
  const form = (s: string) => parseForm(Buffer.from(s));

  it('decodes fields as strings', () => {
    expect(form('message=Hello+world&name=CI%20bot&to=%2B4915')).toEqual({ message: 'Hello world', name: 'CI bot', to: '+4915' });
    expect(form('text=Gr%C3%BC%C3%9Fe')).toEqual({ text: 'Grüße' });
    expect(form('')).toEqual({});
  });

  it.each([
    ['deliver=true', { deliver: true }],
    ['deliver=false', { deliver: false }],
    ['deliver=yes', { deliver: 'yes' }],
    ['timeoutSeconds=30', { timeoutSeconds: 30 }],
    ['timeoutSeconds=2.5', { timeoutSeconds: 2.5 }],
    ['timeoutSeconds=', { timeoutSeconds: '' }],
    ['timeoutSeconds=soon', { timeoutSeconds: 'soon' }],
    ['mode=now', { mode: 'now' }],
  ])('converts %s to %j', (text, expected) => {
    expect(form(text)).toEqual(expected);
  });

  it('returns a plain object', () => {
    expect(Object.getPrototypeOf(form('a=1'))).toBe(Object.prototype);
  });

  it.each(['__proto__', 'constructor', 'prototype'])('refuses the field name %s with 400 INVALID_PAYLOAD', (name) => {
    expect(thrown(() => form(`text=x&${name}=y`))).toMatchObject({ status: 400, code: 'INVALID_PAYLOAD', field: name });
  });

  it('refuses a repeated field with 400 INVALID_PAYLOAD naming it', () => {
    expect(thrown(() => form('text=a&text=b'))).toMatchObject({
      status: 400,
      code: 'INVALID_PAYLOAD',
      field: 'text',
      message: 'text: appears more than once',
    });
  });

  it('refuses a body that is not UTF-8', () => {
    expect(thrown(() => parseForm(Buffer.from([0x74, 0x3d, 0xff])))).toMatchObject({ status: 400, code: 'INVALID_JSON' });
  });
});

describe('parseNamedForm()', () => {
  const form = (s: string) => parseNamedForm(Buffer.from(s));

  it('gives every field as a string, typed names included', () => {
    expect(form('command=%2Fdeploy&text=api+v2&deliver=true&timeoutSeconds=30')).toEqual({
      command: '/deploy',
      text: 'api v2',
      deliver: 'true',
      timeoutSeconds: '30',
    });
    expect(form('')).toEqual({});
  });

  it('gives a repeated field as an array of its values in the order sent', () => {
    expect(form('tag=a&to=x&tag=b&tag=')).toEqual({ tag: ['a', 'b', ''], to: 'x' });
  });

  it('returns a plain object whose values are only what was sent', () => {
    const p = form('a=1&a=2');
    expect(Object.getPrototypeOf(p)).toBe(Object.prototype);
    expect(Object.keys(p)).toEqual(['a']);
  });

  it.each(['__proto__', 'constructor', 'prototype'])('refuses the field name %s with 400 INVALID_PAYLOAD, repeated or not', (name) => {
    expect(thrown(() => form(`text=x&${name}=y`))).toMatchObject({ status: 400, code: 'INVALID_PAYLOAD', field: name });
    expect(thrown(() => form(`${name}=y&${name}=z`))).toMatchObject({ status: 400, code: 'INVALID_PAYLOAD', field: name });
  });

  it('keeps brackets in a name as part of the name (no nesting)', () => {
    expect(form('a[__proto__][polluted]=1')).toEqual({ 'a[__proto__][polluted]': '1' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses a body that is not UTF-8', () => {
    expect(thrown(() => parseNamedForm(Buffer.from([0x74, 0x3d, 0xff])))).toMatchObject({ status: 400, code: 'INVALID_JSON' });
  });
});
