/**
 * The engine settings (three V8 flags and the C allocator's setting; docs/performance.md, "Engine
 * settings") are given where a process is started: the image's command and environment, the
 * systemd unit's, and the benchmark's. They must be the same in the three; `serve` run directly
 * runs with what it was given.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENGINE_ENV, ENGINE_FLAGS } from '../../bench/servers.ts';
import { dockerfileStages, systemdUnit } from '../helpers/deploy.ts';
import { startCli } from '../helpers/cli.ts';

const flagsBefore = (words: string[], entry: string) =>
  words.slice(
    1,
    words.findIndex((w) => w.endsWith(entry)),
  );

describe('the engine settings', () => {
  it('are the same in the image, the systemd unit and the benchmark', () => {
    const image = dockerfileStages().at(-1)!;
    expect(image.cmd![0]).toBe('node');
    expect(flagsBefore(image.cmd!, 'bin/hook-intake.js')).toEqual(ENGINE_FLAGS);
    expect(image.env.GLIBC_TUNABLES).toBe(ENGINE_ENV.GLIBC_TUNABLES);

    const unit = systemdUnit('deploy/hook-intake.service');
    expect(unit.execStart[0]).toMatch(/\/node$/);
    expect(flagsBefore(unit.execStart, 'bin/hook-intake.js')).toEqual(ENGINE_FLAGS);
    expect(unit.env.GLIBC_TUNABLES).toBe(ENGINE_ENV.GLIBC_TUNABLES);
  });
});

const procfs = existsSync('/proc/self/comm');
if (!procfs) console.info('skipping the check of the running server: no /proc on this system');

describe.skipIf(!procfs)('hook-intake serve run directly', () => {
  it('is named hook-intake (ps, top) and runs with the environment it was given: it adds no setting of its own', async () => {
    const srv = await startCli({
      config: { hooks: { enabled: true, token: 'engine-settings-token-0123456789' } },
      env: { GLIBC_TUNABLES: '' },
    });
    try {
      const pid = srv.proc.pid!;
      expect(readFileSync(`/proc/${pid}/comm`, 'utf8').trim()).toBe('hook-intake');
      expect(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')).not.toContainEqual(expect.stringMatching(/^GLIBC_TUNABLES=./));
      expect((await fetch(`${srv.url}/healthz`)).status).toBe(200);
    } finally {
      expect(await srv.stop()).toBe(0);
    }
  });
});
