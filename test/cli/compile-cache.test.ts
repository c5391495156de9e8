/**
 * What the serving process keeps resident: with Node's compile cache on (bin/hook-intake.js), the
 * process that serves never loads the type-stripping compiler, not even on a start that finds the
 * cache empty (it writes the cache and replaces itself once more), and transform workers find
 * their modules in the cache too; the spare worker kept once transforms are edited loads the
 * compiler ahead, for the next edit, without a warning in the log.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { restartForCache, TYPE_STRIPPER } from '../../src/cli/node-flags.ts';
import { cleanup, post, startCli, tempDir, until, type Running } from '../helpers/cli.ts';

const PROBE = join(import.meta.dirname, '../fixtures/loaded-probe.mjs');
const COMPILER = 'internal/deps/amaro/';

describe('restartForCache()', () => {
  const base = { args: ['serve'], caching: true, restarted: false, loaded: ['NativeModule fs', TYPE_STRIPPER], canReplace: true };

  it('restarts a serve that compiled its sources, once', () => {
    expect(restartForCache(base)).toBe(true);
    expect(restartForCache({ ...base, restarted: true })).toBe(false);
  });

  it('does not restart when the sources came from the cache, the cache is off, or for other commands', () => {
    expect(restartForCache({ ...base, loaded: ['NativeModule fs'] })).toBe(false);
    expect(restartForCache({ ...base, loaded: undefined })).toBe(false);
    expect(restartForCache({ ...base, caching: false })).toBe(false);
    expect(restartForCache({ ...base, canReplace: false })).toBe(false);
    expect(restartForCache({ ...base, args: ['check'] })).toBe(false);
    expect(restartForCache({ ...base, args: ['try', 'wake'] })).toBe(false);
  });
});

/** The heavy internals the main thread has loaded, asked for with SIGUSR2. */
async function mainLoaded(srv: Running): Promise<string[]> {
  const from = srv.output().length;
  srv.proc.kill('SIGUSR2');
  await srv.waitFor('loaded-probe main [', 10_000, from);
  return JSON.parse(/loaded-probe main (\[.*\])/.exec(srv.output().slice(from))![1]!) as string[];
}

/** The last list each transform worker printed. */
function workersLoaded(srv: Running): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of srv.output().matchAll(/loaded-probe worker (\d+) (\[.*\])/g)) out.set(m[1]!, JSON.parse(m[2]!) as string[]);
  return out;
}

const has = (list: string[], what: string) => list.some((m) => m.includes(what));

describe('hook-intake serve and the compile cache', () => {
  const token = `hk_${randomBytes(12).toString('hex')}`;
  const config = { hooks: { enabled: true, token, mappings: [{ id: 'shape', match: { path: 'shape' }, action: 'wake', transform: { module: 'shape.ts' } }] } };
  // the cache goes where an operator's would without NODE_COMPILE_CACHE: <tmpdir>/node-compile-cache
  const start = async (dir: string, tmp: string, env: Record<string, string> = {}) => {
    const srv = await startCli({ dir, config, env: { NODE_OPTIONS: `--import ${PROBE}`, TMPDIR: tmp, ...env } });
    const res = await post(`${srv.url}/hooks/shape`, { title: 'disk' }, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    expect(res.body.ok).toBe(true);
    return srv;
  };
  const setup = () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'transforms'));
    const t: string = 'shape';
    writeFileSync(join(dir, 'transforms', 'shape.ts'), `export default (ctx: { payload: { title: string } }) => ({ text: \`${t}: \${ctx.payload.title}\` });\n`);
    mkdirSync(join(dir, 'tmp'));
    return { dir, tmp: join(dir, 'tmp'), cache: join(dir, 'tmp', 'node-compile-cache') };
  };

  it('serves without the compiler from the first start, and its workers from the second; the spare kept after an edit has it ready', async () => {
    const { dir, tmp, cache } = setup();
    try {
      const first = await start(dir, tmp);
      try {
        // the first start compiled the sources, wrote the cache and replaced itself (same pid)
        expect(readdirSync(cache).length).toBeGreaterThan(0);
        expect(has(await mainLoaded(first), COMPILER)).toBe(false);
      } finally {
        expect(await first.stop()).toBe(0);
      }
      const second = await start(dir, tmp);
      try {
        expect(has(await mainLoaded(second), COMPILER)).toBe(false);
        const workers = workersLoaded(second);
        expect(workers.size).toBeGreaterThan(0);
        for (const list of workers.values()) expect(has(list, COMPILER)).toBe(false);
        // an edit: the new generation's worker strips the edited module, and the spare kept from
        // then on for the next reload has the compiler loaded already
        const before = new Set(workers.keys());
        writeFileSync(join(dir, 'transforms', 'shape.ts'), `export default (ctx: { payload: { title: string } }) => ({ text: 'edited: ' + ctx.payload.title });\n`);
        const after = await until(() => {
          const started = [...workersLoaded(second)].filter(([id]) => !before.has(id));
          return started.length >= 2 && started.every(([, list]) => has(list, COMPILER)) && started;
        });
        expect(after.length).toBe(2);
        expect(second.output()).not.toMatch(/ExperimentalWarning|stripTypeScriptTypes/);
      } finally {
        expect(await second.stop()).toBe(0);
      }
    } finally {
      cleanup(dir);
    }
  });

  it('keeps the compiler loaded when the cache is turned off (what the checks above rule out)', async () => {
    const { dir, tmp } = setup();
    try {
      const srv = await start(dir, tmp, { NODE_DISABLE_COMPILE_CACHE: '1' });
      try {
        expect(has(await mainLoaded(srv), COMPILER)).toBe(true);
        const workers = workersLoaded(srv);
        expect(workers.size).toBeGreaterThan(0);
        for (const list of workers.values()) expect(has(list, COMPILER)).toBe(true);
      } finally {
        expect(await srv.stop()).toBe(0);
      }
    } finally {
      cleanup(dir);
    }
  });
});
