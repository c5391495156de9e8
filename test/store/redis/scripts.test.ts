/** The loader of the Redis driver's Lua scripts: includes resolved once each, cycles and missing files refused. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveIncludes, scriptTexts } from '../../../src/store/redis/scripts.ts';
import { cleanup, tempDir } from '../../helpers/cli.ts';

describe('resolveIncludes()', () => {
  const dir = tempDir('hook-intake-lua-');
  afterAll(() => cleanup(dir));
  const inc = join(dir, 'includes');
  mkdirSync(inc, { recursive: true });
  const write = (name: string, text: string) => writeFileSync(join(inc, `${name}.lua`), text);
  write('a', '--- @include "b"\nlocal function a() return b() end\n');
  write('b', 'local function b() return 1 end\n');
  write('loop1', '--- @include "loop2"\n');
  write('loop2', '--- @include "loop1"\n');

  it('puts each include in once, before the script, helpers of helpers first', async () => {
    const text = await resolveIncludes('s.lua', 'local P = ARGV[1]\n--- @include "a"\n--- @include "b"\nreturn a()\n', inc);
    expect(text).toBe('local P = ARGV[1]\nlocal function b() return 1 end\nlocal function a() return b() end\n\nreturn a()\n');
  });

  it('refuses a cycle, naming the chain', async () => {
    await expect(resolveIncludes('s.lua', '--- @include "loop1"\n', inc)).rejects.toThrow(/loop1 → loop2 → loop1/);
  });

  it('refuses a missing include, naming the script and the file', async () => {
    await expect(resolveIncludes('s.lua', '--- @include "nope"\n', inc)).rejects.toThrow(
      /^s\.lua: cannot include "nope": no file .*nope\.lua$/,
    );
  });
});

describe("the driver's scripts", () => {
  it('take only the helpers they use', async () => {
    const texts = await scriptTexts();
    expect(texts.get('countInWindow')).not.toMatch(/local function/);
    expect(texts.get('accept')!.match(/local function restatus/g)).toHaveLength(1);
    expect(texts.get('claimTasks')).toMatch(/local function gone/);
    expect(texts.get('claimTasks')).not.toMatch(/local function restatus/);
    for (const [name, text] of texts) expect(text, name).not.toMatch(/@include/);
  });
});
