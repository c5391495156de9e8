/**
 * `npm run build` (and `npm install`, through `prepare`): the TypeScript of `src/` and `plugins/`
 * compiled to JavaScript in `dist/` (tsc with tsconfig.build.json: types removed, relative imports
 * renamed to `.js`, no typecheck, which `npm run typecheck` does), and the files beside them that
 * are not code (the Redis driver's Lua scripts) copied there, so that the compiled modules find
 * them where the sources do. The CLI runs `dist/` (docs/development.md, "Building").
 */
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { extname, join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const DIST = join(ROOT, 'dist');
const CODE = new Set(['.ts', '.js']);

rmSync(DIST, { recursive: true, force: true });
const tsc = spawnSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
if (tsc.error) throw tsc.error;
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

for (const top of ['src', 'plugins'])
  for (const entry of readdirSync(join(ROOT, top), { recursive: true, withFileTypes: true }))
    if (entry.isFile() && !CODE.has(extname(entry.name))) {
      const from = join(entry.parentPath, entry.name);
      cpSync(from, join(DIST, from.slice(ROOT.length + 1)));
    }
