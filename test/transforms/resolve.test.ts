/**
 * Confinement of transform modules (docs/transforms.md, "Where the files go"): a module reference resolves
 * inside the transforms directory, compared by realpath, or it is refused.
 */
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveTransformModule, TRANSFORM_EXTENSIONS } from '../../src/transforms/resolve.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';

const root = realpathSync(tempDir('hook-intake-confine-'));
const dir = join(root, 'transforms');
mkdirSync(join(dir, 'sub'), { recursive: true });
mkdirSync(join(dir, 'folder.ts'));
for (const f of ['a.ts', 'b.mts', 'c.js', 'd.mjs', 'e.cjs', 'sub/nested.ts', 'both.ts', 'both.js', 'notes.txt'])
  writeFileSync(join(dir, f), 'export default () => null;');
writeFileSync(join(root, 'outside.js'), 'export default () => null;');
symlinkSync(join(root, 'outside.js'), join(dir, 'evil.js'));
symlinkSync(join(dir, 'a.ts'), join(dir, 'alias.ts'));
symlinkSync(root, join(dir, 'up'));
symlinkSync(join(dir, 'sub'), join(root, 'linked-transforms'));
afterAll(() => cleanup(root));

const resolved = (module: string, from = dir) => {
  const r = resolveTransformModule(from, module);
  if ('error' in r) throw new Error(`refused: ${r.error}`);
  return r.file;
};
const refused = (module: string, from = dir) => {
  const r = resolveTransformModule(from, module);
  if ('file' in r) throw new Error(`resolved to ${r.file}`);
  return r.error;
};

describe('resolveTransformModule()', () => {
  it.each([
    ['a.ts', 'a.ts'],
    ['b.mts', 'b.mts'],
    ['c.js', 'c.js'],
    ['d.mjs', 'd.mjs'],
    ['e.cjs', 'e.cjs'],
    ['./a.ts', 'a.ts'],
    ['sub/nested.ts', 'sub/nested.ts'],
    ['sub//nested.ts', 'sub/nested.ts'],
  ])('resolves %s', (module, file) => {
    expect(resolved(module)).toBe(join(dir, file));
  });

  it.each([
    ['a', 'a.ts'],
    ['b', 'b.mts'],
    ['c', 'c.js'],
    ['d', 'd.mjs'],
    ['e', 'e.cjs'],
    ['sub/nested', 'sub/nested.ts'],
    ['both', 'both.ts'],
  ])('finds the extensionless %s as %s', (module, file) => {
    expect(resolved(module)).toBe(join(dir, file));
  });

  it('tries the extensions in the documented order', () => {
    expect(TRANSFORM_EXTENSIONS).toEqual(['.ts', '.mts', '.js', '.mjs', '.cjs']);
  });

  it('follows a symlink that stays inside, returning the real file', () => {
    expect(resolved('alias.ts')).toBe(join(dir, 'a.ts'));
  });

  it('accepts a transforms directory reached through a symlink', () => {
    expect(resolved('nested.ts', join(root, 'linked-transforms'))).toBe(join(dir, 'sub', 'nested.ts'));
  });

  it.each([
    ['..', '../outside.js', 'must not contain ".."'],
    ['.. in the middle', 'sub/../../outside.js', 'must not contain ".."'],
    ['.. even when it would stay inside', 'sub/../a.ts', 'must not contain ".."'],
    ['.. with backslashes', 'sub\\..\\..\\outside.js', 'must not contain ".."'],
    ['an absolute path', join(root, 'outside.js'), 'must be a path relative to the transforms directory'],
    ['an absolute path inside the directory', join(dir, 'a.ts'), 'must be a path relative to the transforms directory'],
    ['a Windows drive path', 'C:\\transforms\\a.ts', 'must be a path relative to the transforms directory'],
    ['a symlink to a file outside', 'evil.js', `resolves to ${join(root, 'outside.js')}, outside the transforms directory ${dir}`],
    ['a path through a symlinked directory outside', 'up/outside.js', 'outside the transforms directory'],
    ['a missing file', 'missing.ts', `"missing.ts" not found in ${dir}`],
    ['a missing extensionless module', 'missing', 'not found in'],
    ['another extension', 'notes.txt', '"notes.txt": transforms must be .ts, .mts, .js, .mjs, .cjs files'],
    ['a JSON file', 'data.json', 'transforms must be'],
    ['a directory', 'folder.ts', '"folder.ts" is not a file'],
    ['a directory without extension', 'sub', 'not found'],
  ])('refuses %s', (_what, module, reason) => {
    expect(refused(module)).toContain(reason);
  });

  it('lists the extensions it tried for an extensionless module', () => {
    expect(refused('missing')).toBe(`"missing" not found in ${dir} (tried .ts, .mts, .js, .mjs, .cjs)`);
  });

  it('refuses everything when the transforms directory does not exist', () => {
    expect(refused('a.ts', join(root, 'nope'))).toBe(`the transforms directory ${join(root, 'nope')} does not exist`);
  });
});
