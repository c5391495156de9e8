/**
 * Node's compile cache, which the CLI turns on in the main thread and in each transform worker
 * (docs/performance.md, "Engine settings"): a start fills it, in the workers too, as soon as it
 * answers, and a start that finds every module in it compiles nothing and so writes nothing.
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cleanup, post, startCli, tempDir, until } from '../helpers/cli.ts';

/** Every file of the cache directory with its size and modification time. */
function snapshot(cache: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const e of readdirSync(cache, { recursive: true, withFileTypes: true }))
    if (e.isFile()) {
      const s = statSync(join(e.parentPath, e.name));
      files.set(join(e.parentPath, e.name), `${s.size} ${s.mtimeMs}`);
    }
  return files;
}

describe('hook-intake serve and the compile cache', () => {
  const token = `hk_${randomBytes(12).toString('hex')}`;
  const shape = { id: 'shape', match: { path: 'shape' }, action: 'wake', transform: { module: 'shape.ts' } };

  /**
   * Starts serve on `mappings` with `tmp` as its temporary directory, sends one request to each
   * mapping, stops it, and returns where the cache is: where an operator's would be without
   * NODE_COMPILE_CACHE, <tmpdir>/node-compile-cache.
   */
  async function serveOnce(dir: string, tmp: string, mappings: unknown[], env: Record<string, string> = {}): Promise<string> {
    mkdirSync(tmp, { recursive: true });
    const srv = await startCli({ dir, config: { hooks: { enabled: true, token, mappings } }, env: { TMPDIR: tmp, ...env } });
    try {
      for (const m of mappings as { match: { path: string } }[]) {
        const res = await post(`${srv.url}/hooks/${m.match.path}`, { title: 'disk' }, { authorization: `Bearer ${token}` });
        expect(res.status).toBe(200);
      }
    } finally {
      expect(await srv.stop()).toBe(0);
    }
    return join(tmp, 'node-compile-cache');
  }

  const setup = () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'transforms'));
    writeFileSync(
      join(dir, 'transforms', 'shape.ts'),
      'export default (ctx: { payload: { title: string } }) => ({ text: `shape: ${ctx.payload.title}` });\n',
    );
    return dir;
  };

  it('is filled by a start, transform workers included, and left as it is by a start that finds everything in it', async () => {
    const dir = setup();
    try {
      const plain = await serveOnce(dir, join(dir, 'tmp-plain'), []);
      const withTransform = await serveOnce(dir, join(dir, 'tmp-transform'), [shape]);
      // the worker's own modules and the transform it stripped are in the cache too
      expect(snapshot(plain).size).toBeGreaterThan(0);
      expect(snapshot(withTransform).size).toBeGreaterThan(snapshot(plain).size);

      const before = snapshot(withTransform);
      await serveOnce(dir, join(dir, 'tmp-transform'), [shape]);
      expect(snapshot(withTransform)).toEqual(before);
    } finally {
      cleanup(dir);
    }
  });

  it('is written by a first start once it answers, not left to its exit (which it would keep waiting after `stopped`)', async () => {
    const dir = setup();
    try {
      const tmp = join(dir, 'tmp');
      mkdirSync(tmp);
      const srv = await startCli({ dir, config: { hooks: { enabled: true, token } }, env: { TMPDIR: tmp } });
      try {
        const cache = join(tmp, 'node-compile-cache');
        await until(() => existsSync(cache) && snapshot(cache).size > 0);
        expect(srv.proc.exitCode).toBeNull();
      } finally {
        expect(await srv.stop()).toBe(0);
      }
    } finally {
      cleanup(dir);
    }
  });

  it('is not written with NODE_DISABLE_COMPILE_CACHE=1', async () => {
    const dir = setup();
    try {
      const cache = await serveOnce(dir, join(dir, 'tmp'), [shape], { NODE_DISABLE_COMPILE_CACHE: '1' });
      expect(() => readdirSync(cache)).toThrow(/ENOENT/);
    } finally {
      cleanup(dir);
    }
  });
});
