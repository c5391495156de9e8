/**
 * `serve` replaces itself once with a smaller young generation, unless the
 * operator chose a size; other commands run as they are.
 */
import { existsSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { serveFlags } from '../../src/cli/node-flags.ts';
import { cleanup, post, startCli } from '../helpers/cli.ts';

describe('serveFlags()', () => {
  it('adds the semi-space size for serve only', () => {
    expect(serveFlags(['serve', '--port', '0'], [], undefined)).toEqual(['--max-semi-space-size=8']);
    expect(serveFlags(['check'], [], undefined)).toEqual([]);
    expect(serveFlags(['try', 'wake'], [], undefined)).toEqual([]);
    expect(serveFlags([], [], undefined)).toEqual([]);
  });

  it("keeps the operator's choice, on the command line or in NODE_OPTIONS, in either spelling", () => {
    expect(serveFlags(['serve'], ['--max-semi-space-size=64'], undefined)).toEqual([]);
    expect(serveFlags(['serve'], ['--max_semi_space_size=64'], undefined)).toEqual([]);
    expect(serveFlags(['serve'], [], '--enable-source-maps --max-semi-space-size=4')).toEqual([]);
    expect(serveFlags(['serve'], [], '--enable-source-maps')).toEqual(['--max-semi-space-size=8']);
  });
});

const procfs = existsSync('/proc/self/cmdline');
if (!procfs) console.info('skipping the command-line check of the running server: no /proc on this system');

describe.skipIf(!procfs)('hook-intake serve', () => {
  const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  const config = () => ({ hooks: { enabled: true, token: `hk_${randomBytes(12).toString('hex')}` }, gateway: { auth: { token: `gw_${randomBytes(12).toString('hex')}` } } });

  it('runs with the flag under the pid it was started as, and serves', async () => {
    const c = config();
    const srv = await startCli({ config: c });
    try {
      expect(cmdline(srv.proc.pid!)).toContain('--max-semi-space-size=8');
      expect((await post(`${srv.url}/hooks/wake`, { text: 'x', mode: 'next-heartbeat' }, { authorization: `Bearer ${c.hooks.token}` })).status).toBe(200);
    } finally {
      expect(await srv.stop()).toBe(0);
      cleanup(srv.dir);
    }
  });

  it('leaves a size set in NODE_OPTIONS alone', async () => {
    const srv = await startCli({ config: config(), env: { NODE_OPTIONS: '--max-semi-space-size=4' } });
    try {
      expect(cmdline(srv.proc.pid!)).not.toContain('--max-semi-space-size=8');
    } finally {
      expect(await srv.stop()).toBe(0);
      cleanup(srv.dir);
    }
  });
});
