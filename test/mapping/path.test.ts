/**
 * Path expressions (docs/mappings.md, "Templates"): parsed once at load, prototype segments
 * refused, and lookups that read own properties only.
 */
import { describe, expect, it } from 'vitest';
import { getPath, parsePath, PathError } from '../../src/mapping/path.ts';

describe('parsePath()', () => {
  it.each([
    ['source', ['source']],
    ['messages[0].subject', ['messages', 0, 'subject']],
    ['repository.full_name', ['repository', 'full_name']],
    ['labels[2]["display name"]', ['labels', 2, 'display name']],
    ["labels['a.b']", ['labels', 'a.b']],
    ['x-github-event', ['x-github-event']],
    ['$meta.a_b', ['$meta', 'a_b']],
    ['items.0', ['items', '0']],
    ['  padded.path  ', ['padded', 'path']],
    ['a[10][2]', ['a', 10, 2]],
    ['a["]"]', ['a', ']']],
  ])('%j → %j', (expr, segs) => {
    expect(parsePath(expr)).toEqual(segs);
  });

  it.each([
    ['', 'empty path'],
    ['   ', 'empty path'],
    ['.a', 'unexpected "." at 1'],
    ['a..b', 'unexpected "." at 3'],
    ['a.', 'unexpected "end" at 3'],
    ['a[', 'expected an index or a quoted key after "["'],
    ['a[x]', 'expected an index or a quoted key after "["'],
    ['a[0', 'expected "]" at 4'],
    ['a["b"', 'expected "]" at 6'],
    ['a["b]', 'unclosed quote'],
    ['a b', 'unexpected " " at 2'],
    ['[0]', 'unexpected "[" at 1'],
    ['a.b()', 'unexpected "(" at 4'],
  ])('refuses %j (%s)', (expr, reason) => {
    expect(() => parsePath(expr)).toThrow(PathError);
    expect(() => parsePath(expr)).toThrow(reason);
  });

  it.each([
    '__proto__',
    'a.__proto__',
    'constructor',
    'payload.constructor.prototype',
    'a.prototype',
    'a["__proto__"]',
    "a['constructor']",
    'a[0]["prototype"].b',
  ])('refuses the prototype segment in %j', (expr) => {
    expect(() => parsePath(expr)).toThrow(/"(__proto__|constructor|prototype)" is not allowed in a path/);
  });

  it('allows names that only contain a forbidden word', () => {
    expect(parsePath('my_constructor.prototypes.__proto__x')).toEqual(['my_constructor', 'prototypes', '__proto__x']);
  });
});

describe('getPath()', () => {
  const payload = {
    source: 'gmail',
    messages: [{ id: 'm1', subject: 'Hello', tags: ['a', 'b'] }, { id: 'm2' }],
    nested: { 'display name': 'Ana', zero: 0, no: false, nil: null },
  };

  it.each([
    ['source', 'gmail'],
    ['messages[0].subject', 'Hello'],
    ['messages.1.id', 'm2'],
    ['messages[0].tags[1]', 'b'],
    ['nested["display name"]', 'Ana'],
    ['nested.zero', 0],
    ['nested.no', false],
    ['nested.nil', null],
    ['messages', payload.messages],
  ])('%s → %j', (expr, value) => {
    expect(getPath(payload, parsePath(expr))).toEqual(value);
  });

  it.each([
    ['a missing key', 'missing'],
    ['a missing nested key', 'nested.missing.deeper'],
    ['an index past the end', 'messages[5].id'],
    ['a key on an array', 'messages.first'],
    ['a key on a string', 'source.length'],
    ['a key below null', 'nested.nil.x'],
    ['a key below a number', 'nested.zero.x'],
  ])('is undefined for %s', (_what, expr) => {
    expect(getPath(payload, parsePath(expr))).toBeUndefined();
  });

  it('reads nothing from an undefined or primitive root', () => {
    expect(getPath(undefined, ['a'])).toBeUndefined();
    expect(getPath('text', ['length'])).toBeUndefined();
    expect(getPath(null, [0])).toBeUndefined();
  });

  it('returns the root for an empty path', () => {
    expect(getPath(payload, [])).toBe(payload);
  });

  it('never reads an inherited property', () => {
    const proto = { secret: 'inherited' };
    const obj = Object.create(proto) as Record<string, unknown>;
    obj.own = 'mine';
    expect(getPath(obj, ['own'])).toBe('mine');
    expect(getPath(obj, ['secret'])).toBeUndefined();
    // Object.prototype members are inherited too
    expect(getPath({}, ['toString'])).toBeUndefined();
    expect(getPath({}, ['hasOwnProperty'])).toBeUndefined();
    expect(getPath([], ['map'])).toBeUndefined();
  });

  it('reads nothing through __proto__ or constructor, even with segments built by hand', () => {
    // parsePath refuses these; getPath alone still reads own properties only
    expect(getPath({ a: {} }, ['a', '__proto__'])).toBeUndefined();
    expect(getPath({ a: {} }, ['a', 'constructor'])).toBeUndefined();
  });

  it('reads an own property named like an inherited one', () => {
    const parsed = JSON.parse('{"toString":"own value"}');
    expect(getPath(parsed, ['toString'])).toBe('own value');
  });
});
