/**
 * `hook-intake prune [--dry-run]`: counts what retention would remove, then removes it and prints the
 * counts; a second run finds nothing. The command runs in this process (`runInProcess()`), as
 * `bin/hook-intake.js` would run it: what it prints and its exit code are the point, not the process.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { cleanup, runInProcess, tempDir } from '../helpers/cli.ts';
import { newEvent, newRun, okOutcome } from '../helpers/records.ts';
import { newRequest } from '../store/contract-console.ts';

const dir = tempDir('hook-intake-prune-');
afterAll(() => cleanup(dir));

describe('hook-intake prune', () => {
  it('--dry-run counts, then prune removes and prints what it removed', async () => {
    const store = new SqliteStore({ path: join(dir, 'data', 'hook-intake.db') });
    const now = Date.now();
    // three old runs and requests (1970), and one of each from now, which stays
    for (const at of [1_000, 2_000, 3_000, now]) {
      const run = newRun({ createdAt: at });
      await store.records.accept({ events: [newEvent({ createdAt: at })], runs: [run], request: newRequest({ receivedAt: at }) });
      await store.records.startRun(run.id, at);
      await store.records.finishRun(okOutcome(run.id, { finishedAt: at, delivery: { kind: 'skipped', reason: 'ack' } }));
    }
    await store.close();
    writeFileSync(join(dir, 'config.json5'), '{ retention: { runsDays: 30, requestsDays: 7 } }');
    const args = ['prune', '--config', join(dir, 'config.json5'), '--data', join(dir, 'data')];

    const dry = await runInProcess([...args, '--dry-run']);
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(
      'would remove 3 runs\nwould remove 0 events\nwould remove 0 transcript messages\nwould remove 0 outbox deliveries\nwould remove 3 kept requests\n',
    );
    const done = await runInProcess(args);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('removed 3 runs\n');
    expect(done.stdout).toContain('removed 3 kept requests\n');
    expect((await runInProcess([...args, '--dry-run'])).stdout).toContain('would remove 0 runs\n');

    const after = new SqliteStore({ path: join(dir, 'data', 'hook-intake.db') });
    expect((await after.records.listRuns({ limit: 10 })).map((r) => r.createdAt)).toEqual([now]);
    await after.close();
  });

  it('reads only storage and retention: an unset ${ENV} or a mistake elsewhere in the config does not stop it', async () => {
    const store = new SqliteStore({ path: join(dir, 'other', 'hook-intake.db') });
    // an old run and one from now, which stays
    for (const at of [1_000, Date.now()]) {
      const run = newRun({ createdAt: at });
      await store.records.accept({ events: [], runs: [run] });
      await store.records.startRun(run.id, at);
      await store.records.finishRun(okOutcome(run.id, { finishedAt: at, delivery: { kind: 'skipped', reason: 'ack' } }));
    }
    await store.close();
    const unset = 'HOOK_INTAKE_TEST_UNSET_SECRET';
    delete process.env[unset];
    writeFileSync(
      join(dir, 'whole.json5'),
      `{
        hooks: {
          enabled: true,
          token: '\${${unset}}',
          mappings: [{ id: 'gh', match: { path: 'gh' }, verify: { type: 'github', secret: '\${${unset}}' } }],
        },
        channels: { hook: { type: 'webhook', url: 'https://example.net', secret: '\${${unset}}' }, typo: { tyep: 'x' } },
        storage: { path: 'other/hook-intake.db' },
        retention: { runsDays: 30 },
      }`,
    );
    // serve would refuse it, naming the variable
    expect((await runInProcess(['check', '--config', join(dir, 'whole.json5'), '--data', join(dir, 'data')])).stderr).toContain(unset);
    const r = await runInProcess(['prune', '--config', join(dir, 'whole.json5'), '--data', join(dir, 'data')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('removed 1 runs\n');
  });

  it('refuses a config with a bad retention, naming the key', async () => {
    writeFileSync(join(dir, 'bad.json5'), '{ retention: { runsDays: -1 } }');
    const r = await runInProcess(['prune', '--config', join(dir, 'bad.json5'), '--data', join(dir, 'data')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('retention.runsDays');
  });
});
