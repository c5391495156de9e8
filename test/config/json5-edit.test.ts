/** The textual JSON5 edit: values replaced in place, members and list items inserted in the file's style. */
import JSON5 from 'json5';
import { describe, expect, it } from 'vitest';
import { editConfigText } from '../../src/config/edit.ts';

describe('editConfigText() on YAML', () => {
  it('fills a key left empty, and adds to a list once', () => {
    const e = editConfigText('c.yaml', `# top\nhooks: # soon\npresets: [a]\n`);
    e.set(['hooks', 'enabled'], true);
    e.addToList(['presets'], 'gmail');
    e.addToList(['presets'], 'gmail');
    expect(e.text()).toBe(`# top\nhooks:\n  # soon\n  enabled: true\npresets: [ a, gmail ]\n`);
  });
});

describe('editConfigText() on JSON5 and JSON', () => {
  it('replaces a value in place and keeps the comment after it', () => {
    const e = editConfigText('c.json5', `{\n  hooks: {\n    enabled: false, // later\n  },\n}\n`);
    e.set(['hooks', 'enabled'], true);
    expect(e.text()).toBe(`{\n  hooks: {\n    enabled: true, // later\n  },\n}\n`);
  });

  it('adds a member after a last member without a trailing comma, past its line comment', () => {
    const e = editConfigText('c.json5', `{\n  a: 1 // one\n}\n`);
    e.set(['b', 'c'], 'x');
    expect(e.text()).toBe(`{\n  a: 1, // one\n  b: {\n    c: "x"\n  }\n}\n`);
    expect(JSON5.parse(e.text())).toEqual({ a: 1, b: { c: 'x' } });
  });

  it('writes into an inline object inline, and opens up an empty one', () => {
    const e = editConfigText('c.json5', `{\n  gateway: { port: 1 },\n  hooks: {},\n}\n`);
    e.set(['gateway', 'bind'], '::1');
    e.set(['hooks', 'enabled'], true);
    expect(e.text()).toBe(`{\n  gateway: { port: 1, bind: "::1" },\n  hooks: {\n    enabled: true\n  },\n}\n`);
    const top = editConfigText('c.json5', '{}');
    top.set(['hooks', 'enabled'], true);
    expect(top.text()).toBe('{\n  hooks: {\n    enabled: true\n  }\n}');
  });

  it('replaces a null on the way with an object', () => {
    const e = editConfigText('c.json5', `{\n  hooks: null, // to fill\n}\n`);
    e.set(['hooks', 'gmail', 'account'], 'a@b.c');
    expect(JSON5.parse(e.text())).toEqual({ hooks: { gmail: { account: 'a@b.c' } } });
    expect(e.text()).toContain('// to fill');
  });

  it("adds to a list once, in the file's quote style", () => {
    const e = editConfigText('c.json5', `{\n  presets: ['a'], // list\n  s: 'x',\n}\n`);
    e.addToList(['presets'], 'gmail');
    e.addToList(['presets'], 'gmail');
    expect(e.text()).toBe(`{\n  presets: ['a', 'gmail'], // list\n  s: 'x',\n}\n`);
  });

  it('quotes keys in a .json file', () => {
    const e = editConfigText('c.json', `{\n  "a": 1\n}\n`);
    e.set(['hooks', 'presets'], ['gmail']);
    expect(JSON.parse(e.text())).toEqual({ a: 1, hooks: { presets: ['gmail'] } });
  });

  it('is not fooled by braces and quotes inside strings and comments', () => {
    const text = `{\n  /* { not: a key } */\n  t: "a } \\" {", // }\n  u: 'it\\'s',\n}\n`;
    const e = editConfigText('c.json5', text);
    e.set(['v'], 1);
    expect(JSON5.parse(e.text())).toEqual({ t: 'a } " {', u: "it's", v: 1 });
    expect(e.text()).toContain('/* { not: a key } */');
  });
});
