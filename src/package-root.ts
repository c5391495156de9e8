/**
 * The package's root directory, where package.json is: the files that are not code (`ui/`,
 * `presets/`, package.json itself) are read from there, whether the code runs as the compiled
 * JavaScript in `dist/` (as the CLI does) or as the TypeScript sources (as the tests do).
 * docs/development.md, "Building".
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

function rootAbove(dir: string): string {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'package.json'))) return d;
    if (dirname(d) === d) throw new Error(`no package.json above ${dir}`);
  }
}

export const PACKAGE_ROOT = rootAbove(import.meta.dirname);
