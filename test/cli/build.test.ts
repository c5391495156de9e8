/**
 * `npm run build` (scripts/build.ts, run before the tests by test/global-setup.ts): the CLI runs
 * dist/, so every module of src/ and plugins/ is there as JavaScript, the files that are not code
 * are there beside them, and no compiled module names a TypeScript file of its own
 * (docs/development.md, "Building").
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';

const DIST = join(ROOT, 'dist');

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}
const sources = ['src', 'plugins'].flatMap(filesUnder).filter((f) => !f.endsWith('.test.ts'));

describe('dist/', () => {
  it('holds every module of src/ and plugins/ as JavaScript, and the files that are not code as they are', () => {
    const missing = sources.filter((f) => !existsSync(join(DIST, f.endsWith('.ts') ? `${f.slice(0, -3)}.js` : f)));
    expect(missing).toEqual([]);
    expect(sources.filter((f) => extname(f) === '.lua').length).toBeGreaterThan(0);
  });

  it('has no module that imports or names a relative .ts file', () => {
    const named = filesUnder('dist')
      .filter((f) => f.endsWith('.js'))
      .flatMap((f) => [...readFileSync(join(ROOT, f), 'utf8').matchAll(/['"`](\.{1,2}\/[^'"`]*\.ts)['"`]/g)].map((m) => `${f}: ${m[1]}`));
    expect(named).toEqual([]);
  });
});
