/**
 * What the serving process keeps resident: with Node's compile cache on (bin/hook-intake.js), the
 * process that serves never loads the type-stripping compiler, not even on a start that finds the
 * cache empty (it writes the cache and replaces itself once more), and transform workers find
 * their modules in the cache too. The standby worker kept from the start for the first reload has
 * no compiler until a change is seen, then loads it ahead of the build; the spare kept once
 * transforms are edited loads it ahead, for the next edit; neither puts a warning in the log.
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
  await srv.waitFor('loaded-probe main [', undefined, from);
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
  const shape = { id: 'shape', match: { path: 'shape' }, action: 'wake', transform: { module: 'shape.ts' } };
  const config = { hooks: { enabled: true, token, mappings: [shape] } };
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
    writeFileSync(
      join(dir, 'transforms', 'shape.ts'),
      `export default (ctx: { payload: { title: string } }) => ({ text: \`${t}: \${ctx.payload.title}\` });\n`,
    );
    mkdirSync(join(dir, 'tmp'));
    return { dir, tmp: join(dir, 'tmp'), cache: join(dir, 'tmp', 'node-compile-cache') };
  };

  it('serves without the compiler from the first start, and its workers from the second; the first reload takes the standby, which loads it once a change is seen', async () => {
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
        // before any change: the configuration's worker and the standby kept for the first reload
        const workers = await until(() => workersLoaded(second).size === 2 && workersLoaded(second));
        for (const list of workers.values()) expect(has(list, COMPILER)).toBe(false);
        // a change to the config alone (no module to strip): the reload takes the standby, which
        // loaded the compiler when the change was seen, and starts only the spare for the next one
        const before = new Set(workers.keys());
        writeFileSync(
          second.configFile,
          JSON.stringify({ hooks: { ...config.hooks, mappings: [shape, { id: 'other', match: { path: 'other' }, action: 'wake' }] } }),
        );
        await until(
          async () => (await post(`${second.url}/hooks/other`, { text: 'x' }, { authorization: `Bearer ${token}` })).status === 200,
        );
        const afterConfig = await until(() => {
          const all = [...workersLoaded(second)];
          const warmed = all.filter(([id, list]) => before.has(id) && has(list, COMPILER));
          const started = all.filter(([id]) => !before.has(id));
          return warmed.length === 1 && started.length >= 1 && started.every(([, list]) => has(list, COMPILER)) && { warmed, started };
        });
        expect(afterConfig.started).toHaveLength(1);
        // an edit of the transform: the new generation's worker (that spare) strips the edited
        // module with the compiler it loaded while it waited, and the next spare has it ready too
        const known = new Set(workersLoaded(second).keys());
        writeFileSync(
          join(dir, 'transforms', 'shape.ts'),
          `export default (ctx: { payload: { title: string } }) => ({ text: 'edited: ' + ctx.payload.title });\n`,
        );
        const next = await until(() => {
          const started = [...workersLoaded(second)].filter(([id]) => !known.has(id));
          return started.length >= 1 && started.every(([, list]) => has(list, COMPILER)) && started;
        });
        expect(next).toHaveLength(1);
        expect(second.output()).not.toMatch(/ExperimentalWarning|stripTypeScriptTypes/);
      } finally {
        expect(await second.stop()).toBe(0);
      }
    } finally {
      cleanup(dir);
    }
  });

  it('keeps the compiler loaded when the cache is turned off (what the checks above rule out), under the name restartForCache looks for', async () => {
    const { dir, tmp } = setup();
    try {
      const srv = await start(dir, tmp, { NODE_DISABLE_COMPILE_CACHE: '1' });
      try {
        // restartForCache reads Node's own module list: a Node that renames its compiler fails here, not silently
        expect(await mainLoaded(srv)).toContain(TYPE_STRIPPER);
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
