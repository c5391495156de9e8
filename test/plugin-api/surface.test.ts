/**
 * The public plugin API as a whole: `hook-intake` carries the same values as `hook-intake/plugin`,
 * and docs/plugins.md names every value and type that src/plugin-api/index.ts exports, so the page
 * cannot fall behind the API.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as root from 'hook-intake';
import * as plugin from 'hook-intake/plugin';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';

const page = readFileSync(join(ROOT, 'docs', 'plugins.md'), 'utf8');
const index = readFileSync(join(ROOT, 'src', 'plugin-api', 'index.ts'), 'utf8');

describe('hook-intake/plugin', () => {
  it('has the same values under the package name', () => {
    const values = new Map(Object.entries(root));
    expect([...values.keys()].sort()).toEqual(Object.keys(plugin).sort());
    for (const [name, value] of Object.entries(plugin)) expect(values.get(name), name).toBe(value);
  });

  it('is described name by name in docs/plugins.md', () => {
    const types = [...index.matchAll(/\btype (\w+)/g)].map((m) => m[1]!);
    expect(types).toContain('ChannelMessage');
    const names = [...Object.keys(plugin), ...types];
    // named in code: `name`, or `name(…)` for a function
    expect(names.filter((name) => !new RegExp(`\`${name}[\`(]`).test(page))).toEqual([]);
  });
});
