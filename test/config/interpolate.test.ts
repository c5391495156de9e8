/**
 * `${ENV}` references and `{file}` secrets, resolved before validation.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatPath, interpolate } from '../../src/config/interpolate.ts';
import type { ConfigIssue } from '../../src/errors.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';

const dir = tempDir('hook-intake-interp-');
afterAll(() => cleanup(dir));
mkdirSync(join(dir, 'secrets'));
writeFileSync(join(dir, 'secrets/lf'), 'tok-lf\n');
writeFileSync(join(dir, 'secrets/crlf'), 'tok-crlf\r\n');
writeFileSync(join(dir, 'secrets/two'), 'line1\nline2\n\n');
writeFileSync(join(dir, 'secrets/empty'), '\n');

function run(value: unknown, env: Record<string, string> = {}) {
  const issues: ConfigIssue[] = [];
  const out = interpolate(value, { file: 'cfg.json5', baseDir: dir, env }, issues);
  return { out, issues };
}

describe('interpolate() ${ENV}', () => {
  it.each([
    ['${TOKEN}', 'abc'],
    ['Bearer ${TOKEN}', 'Bearer abc'],
    ['http://${HOST}:${PORT}/hooks', 'http://example.org:8080/hooks'],
    ['$${TOKEN}', '${TOKEN}'],
    ['cost: $5 and ${TOKEN}', 'cost: $5 and abc'],
    ['${lower-case}', '${lower-case}'],
    ['${NESTED}', '${TOKEN}'],
  ])('%j → %j', (input, expected) => {
    const { out, issues } = run({ a: input }, { TOKEN: 'abc', HOST: 'example.org', PORT: '8080', NESTED: '${TOKEN}' });
    expect(issues).toEqual([]);
    expect(out).toEqual({ a: expected });
  });

  it('substitutes an empty variable as empty, not as missing', () => {
    expect(run({ a: 'x${EMPTY}y' }, { EMPTY: '' })).toEqual({ out: { a: 'xy' }, issues: [] });
  });

  it('reports a missing variable with the key path, once per reference', () => {
    const { issues } = run({ hooks: { mappings: [{ to: '${A}' }], token: '${B}-${A}' } });
    expect(issues).toEqual([
      { file: 'cfg.json5', path: 'hooks.mappings[0].to', message: 'environment variable A is not set' },
      { file: 'cfg.json5', path: 'hooks.token', message: 'environment variable B is not set' },
      { file: 'cfg.json5', path: 'hooks.token', message: 'environment variable A is not set' },
    ]);
  });

  it('leaves numbers, booleans and null alone and does not change its input', () => {
    const input = { a: 1, b: true, c: null, d: ['${X}'] };
    const { out } = run(input, { X: 'x' });
    expect(out).toEqual({ a: 1, b: true, c: null, d: ['x'] });
    expect(input.d[0]).toBe('${X}');
  });
});

describe('interpolate() {file} secrets', () => {
  it.each([
    ['secrets/lf', 'tok-lf'],
    ['secrets/crlf', 'tok-crlf'],
    ['secrets/two', 'line1\nline2\n'],
  ])('reads %s relative to the config directory, stripping one trailing newline', (file, expected) => {
    expect(run({ hooks: { token: { file } } })).toEqual({ out: { hooks: { token: expected } }, issues: [] });
  });

  it('reads an absolute path as is', () => {
    expect(run({ t: { file: join(dir, 'secrets/lf') } }).out).toEqual({ t: 'tok-lf' });
  });

  it('expands ${ENV} in the file path', () => {
    expect(run({ t: { file: '${SECRETS}/lf' } }, { SECRETS: join(dir, 'secrets') }).out).toEqual({ t: 'tok-lf' });
  });

  it('reports a missing file with the key path', () => {
    const { issues } = run({ hooks: { mappings: [{ verify: { secret: [{ file: 'secrets/nope' }] } }] } });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ file: 'cfg.json5', path: 'hooks.mappings[0].verify.secret[0]' });
    expect(issues[0]!.message).toBe(`cannot read secret file ${join(dir, 'secrets/nope')} (ENOENT)`);
  });

  it('reports an empty file', () => {
    expect(run({ gateway: { auth: { token: { file: 'secrets/empty' } } } }).issues).toEqual([
      { file: 'cfg.json5', path: 'gateway.auth.token', message: `secret file ${join(dir, 'secrets/empty')} is empty` },
    ]);
  });

  it('treats {file} under hooks.mappings[].match as data (a rule), not a secret', () => {
    const mapping = {
      match: { payload: { file: { file: 'secrets/lf' }, attachment: { in: [{ file: 'x' }] } } },
      to: { file: 'secrets/lf' },
    };
    const { out, issues } = run({ hooks: { mappings: [mapping] } });
    expect(issues).toEqual([]);
    expect(out).toEqual({ hooks: { mappings: [{ ...mapping, to: 'tok-lf' }] } });
  });

  it('is only an object whose one key is a string "file"', () => {
    const value = { a: { file: 'secrets/lf', mode: 1 }, b: { file: 3 } };
    expect(run(value)).toEqual({ out: value, issues: [] });
  });
});

describe('formatPath()', () => {
  it.each([
    [[], ''],
    [['hooks', 'token'], 'hooks.token'],
    [['hooks', 'mappings', 2, 'match'], 'hooks.mappings[2].match'],
    [['channels', 'my-chat'], 'channels.my-chat'],
    [['match', 'headers', 'x y'], 'match.headers["x y"]'],
    [[0, 'a'], '[0].a'],
  ])('%j → %s', (path, expected) => {
    expect(formatPath(path)).toBe(expected);
  });
});
