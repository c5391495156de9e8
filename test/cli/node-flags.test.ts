/**
 * `serve` replaces itself once with a smaller young generation, without
 * Maglev and without allocation-site pretenuring, each unless the operator
 * chose otherwise; other commands run as they are.
 */
import { existsSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MALLOC_TUNABLE, serveEnv, serveFlags } from '../../src/cli/node-flags.ts';
import { cleanup, post, startCli } from '../helpers/cli.ts';

describe('serveFlags()', () => {
  it('adds its three V8 flags (semi-space size, Maglev off, pretenuring off) for serve only', () => {
    expect(serveFlags(['serve', '--port', '0'], [], undefined)).toEqual([
      '--max-semi-space-size=8',
      '--no-maglev',
      '--no-allocation-site-pretenuring',
    ]);
    expect(serveFlags(['check'], [], undefined)).toEqual([]);
    expect(serveFlags(['try', 'wake'], [], undefined)).toEqual([]);
    expect(serveFlags([], [], undefined)).toEqual([]);
  });

  it("keeps the operator's semi-space size, on the command line or in NODE_OPTIONS, in either spelling", () => {
    expect(serveFlags(['serve'], ['--max-semi-space-size=64'], undefined)).toEqual(['--no-maglev', '--no-allocation-site-pretenuring']);
    expect(serveFlags(['serve'], ['--max_semi_space_size=64'], undefined)).toEqual(['--no-maglev', '--no-allocation-site-pretenuring']);
    expect(serveFlags(['serve'], [], '--enable-source-maps --max-semi-space-size=4')).toEqual([
      '--no-maglev',
      '--no-allocation-site-pretenuring',
    ]);
    expect(serveFlags(['serve'], [], '--enable-source-maps')).toEqual([
      '--max-semi-space-size=8',
      '--no-maglev',
      '--no-allocation-site-pretenuring',
    ]);
  });

  it("keeps the operator's Maglev and pretenuring choices either way, in any spelling V8 reads", () => {
    for (const flag of ['--maglev', '--no-maglev', '--nomaglev', '--no_maglev'])
      expect(serveFlags(['serve'], [flag], undefined), flag).toEqual(['--max-semi-space-size=8', '--no-allocation-site-pretenuring']);
    for (const flag of ['--allocation-site-pretenuring', '--no-allocation-site-pretenuring', '--noallocation_site_pretenuring'])
      expect(serveFlags(['serve'], [flag], undefined), flag).toEqual(['--max-semi-space-size=8', '--no-maglev']);
    expect(serveFlags(['serve'], ['--maglev', '--max-semi-space-size=16', '--allocation-site-pretenuring'], undefined)).toEqual([]);
    // tuning flags of the same names are not a choice to run with or without them
    expect(serveFlags(['serve'], ['--maglev-inlining', '--allocation-site-tracking'], undefined)).toEqual([
      '--max-semi-space-size=8',
      '--no-maglev',
      '--no-allocation-site-pretenuring',
    ]);
  });
});

describe('serveEnv()', () => {
  it("holds glibc's allocation threshold for serve only", () => {
    expect(MALLOC_TUNABLE).toBe('glibc.malloc.mmap_threshold=131072');
    expect(serveEnv(['serve', '--port', '0'], {})).toEqual({ GLIBC_TUNABLES: MALLOC_TUNABLE });
    for (const args of [['check'], ['try', 'wake'], []]) expect(serveEnv(args, {}), args.join(' ')).toBeUndefined();
  });

  it("adds it to the operator's other tunables", () => {
    expect(serveEnv(['serve'], { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' })).toEqual({
      GLIBC_TUNABLES: `glibc.malloc.arena_max=2:${MALLOC_TUNABLE}`,
    });
    expect(serveEnv(['serve'], { GLIBC_TUNABLES: '' })).toEqual({ GLIBC_TUNABLES: MALLOC_TUNABLE });
  });

  it("keeps the operator's own threshold, in GLIBC_TUNABLES or glibc's older variables", () => {
    for (const env of [
      { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=4194304' },
      { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=0' },
      { MALLOC_MMAP_THRESHOLD_: '65536' },
      { MALLOC_TRIM_THRESHOLD_: '65536' },
    ])
      expect(serveEnv(['serve'], env), JSON.stringify(env)).toBeUndefined();
    // a name that only ends like one of them is not the operator's choice
    expect(serveEnv(['serve'], { GLIBC_TUNABLES: 'glibc.malloc.xmmap_threshold=1' })).toEqual({
      GLIBC_TUNABLES: `glibc.malloc.xmmap_threshold=1:${MALLOC_TUNABLE}`,
    });
  });
});

const procfs = existsSync('/proc/self/cmdline');
if (!procfs) console.info('skipping the command-line check of the running server: no /proc on this system');

describe.skipIf(!procfs)('hook-intake serve', () => {
  const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');

  /** Starts `serve` with a fresh config, hands `check` its pid and a wake request, then stops it (exit 0) whatever happened. */
  async function serving(
    opts: { nodeArgs?: string[]; env?: Record<string, string> },
    check: (pid: number, wake: () => Promise<number>) => Promise<void> | void,
  ): Promise<void> {
    const c = {
      hooks: { enabled: true, token: `hk_${randomBytes(12).toString('hex')}` },
      gateway: { auth: { token: `gw_${randomBytes(12).toString('hex')}` } },
    };
    const srv = await startCli({ config: c, ...opts });
    const wake = async () =>
      (await post(`${srv.url}/hooks/wake`, { text: 'x', mode: 'next-heartbeat' }, { authorization: `Bearer ${c.hooks.token}` })).status;
    try {
      await check(srv.proc.pid!, wake);
    } finally {
      expect(await srv.stop()).toBe(0);
      cleanup(srv.dir);
    }
  }

  it('runs with the flag under the pid it was started as, and serves', () =>
    serving({}, async (pid, wake) => {
      expect(cmdline(pid)).toContain('--max-semi-space-size=8');
      expect(cmdline(pid)).toContain('--no-maglev');
      expect(cmdline(pid)).toContain('--no-allocation-site-pretenuring');
      expect(environ(pid)).toContain(`GLIBC_TUNABLES=${MALLOC_TUNABLE}`);
      expect(await wake()).toBe(200);
    }));

  it('replaces itself for the allocator setting alone when the operator chose all three V8 flags', () =>
    serving({ nodeArgs: ['--maglev', '--allocation-site-pretenuring', '--max-semi-space-size=16'] }, async (pid, wake) => {
      expect(environ(pid)).toContain(`GLIBC_TUNABLES=${MALLOC_TUNABLE}`);
      expect(cmdline(pid)).toContain('--max-semi-space-size=16');
      expect(cmdline(pid)).not.toContain('--no-maglev');
      expect(await wake()).toBe(200);
    }));

  it("leaves the operator's allocator threshold alone", () =>
    serving({ env: { GLIBC_TUNABLES: 'glibc.malloc.trim_threshold=262144' } }, (pid) => {
      const env = environ(pid);
      expect(env).toContain('GLIBC_TUNABLES=glibc.malloc.trim_threshold=262144');
      expect(env.join('\n')).not.toContain(MALLOC_TUNABLE);
    }));

  it('leaves Maglev on when node was started with --maglev', () =>
    serving({ nodeArgs: ['--maglev'] }, async (pid, wake) => {
      expect(cmdline(pid)).toContain('--max-semi-space-size=8');
      expect(cmdline(pid)).toContain('--no-allocation-site-pretenuring');
      expect(cmdline(pid)).not.toContain('--no-maglev');
      expect(await wake()).toBe(200);
    }));

  it('leaves a size set in NODE_OPTIONS alone', () =>
    serving({ env: { NODE_OPTIONS: '--max-semi-space-size=4' } }, (pid) => {
      expect(cmdline(pid)).not.toContain('--max-semi-space-size=8');
      expect(cmdline(pid)).toContain('--no-maglev');
    }));
});
