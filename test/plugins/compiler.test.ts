/**
 * jiti's compiler in a child process (src/plugins/compiler.ts): plugins and
 * transforms that jiti must compile load as before, with the same errors, and
 * the server's process never loads jiti's compiler.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createJiti } from 'jiti';
import { afterAll, describe, expect, it } from 'vitest';
import { compileInChild } from '../../src/plugins/compiler.ts';
import { loadPluginModule } from '../../src/plugins/load.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';

const dir = tempDir('hook-intake-compiler-');
afterAll(() => cleanup(dir));

/** A file no cache has seen: its content is new. */
function fresh(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, `${text}\n// ${process.hrtime.bigint()}\n`);
  return file;
}

describe('compileInChild', () => {
  it('compiles TypeScript that Node cannot strip (an enum, an extensionless import) into code jiti evaluates', async () => {
    fresh('helper.ts', `export const twice = (n: number): number => n * 2;`);
    const file = fresh(
      'enum.ts',
      `import { twice } from './helper';\nenum Kind { Wake = 'wake' }\nexport default { kind: Kind.Wake, n: twice(21) as number };`,
    );
    const compiled: string[] = [];
    const jiti = createJiti(import.meta.url, {
      fsCache: false,
      moduleCache: false,
      transform: (opts) => {
        compiled.push(opts.filename ?? '');
        return compileInChild(opts);
      },
    });
    const mod = (await jiti.import(file)) as { default: { kind: string; n: number } };
    expect(mod.default).toEqual({ kind: 'wake', n: 42 });
    expect(compiled.map((f) => f.split('/').pop())).toEqual(['enum.ts', 'helper.ts']);
  });

  it('names the module when the child cannot finish', () => {
    expect(() => compileInChild({ source: 'export const a = 1;', filename: '/plugins/slow.ts', ts: true }, 1)).toThrow(
      /^cannot compile \/plugins\/slow\.ts: /,
    );
  });
});

describe('loadPluginModule', () => {
  it('reports a syntax error with the file, line and column', async () => {
    const file = fresh(
      'broken.ts',
      `import { definePlugin } from 'hook-intake/plugin';\nconst n: number = ;\nexport default definePlugin({ name: 'broken' });`,
    );
    await expect(loadPluginModule(file)).rejects.toThrow(`${file}:2:18`);
  });

  it('loads a plugin that needs compiling without loading the compiler into the process', async () => {
    const file = fresh(
      'plugin.ts',
      `import { definePlugin } from 'hook-intake/plugin';\nconst suffix: string = 'ed';\nexport default definePlugin({ name: 'compil' + suffix });`,
    );
    // a process of its own, so that no other test's module loads count
    const script = `
      import { createRequire } from 'node:module';
      const { loadPluginModule } = await import(${JSON.stringify(new URL('../../src/plugins/load.ts', import.meta.url).href)});
      const p = await loadPluginModule(${JSON.stringify(file)});
      const loaded = Object.keys(createRequire(import.meta.url).cache);
      console.log(JSON.stringify({ name: p.name, jiti: loaded.some((k) => /jiti.dist.jiti\\.cjs$/.test(k)), babel: loaded.filter((k) => /babel/.test(k)) }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(stdout)).toEqual({ name: 'compiled', jiti: true, babel: [] });
  });
});
