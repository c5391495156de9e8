/**
 * What a waiting request is told of its run (docs/waiting.md, "The answer"): the run's status, what became of its reply,
 * the delivery's status and attempts, and the reply text only where allowed.
 */
import { describe, expect, it } from 'vitest';
import { completionOf, hasEnded } from '../../src/intake/completion.ts';
import type { Run, RunDelivery } from '../../src/store/types.ts';
import { newRun } from '../helpers/records.ts';

const run = (status: Run['status'], reply: string | null, delivery: Partial<RunDelivery>): Run => ({
  ...newRun(),
  status,
  attempts: 1,
  startedAt: 1_500,
  finishedAt: 2_000,
  reply,
  summary: null,
  error: status === 'ok' ? null : 'provider said no',
  usage: null,
  forwarded: null,
  delivery: { status: 'pending', reason: null, channel: null, to: null, attempts: 0, ...delivery },
});

describe('hasEnded()', () => {
  it.each([
    ['queued', 'pending', false],
    ['running', 'pending', false],
    ['ok', 'pending', false],
    ['ok', 'sent', true],
    ['ok', 'failed', true],
    ['ok', 'skipped', true],
    ['error', 'skipped', true],
  ] as const)('a run %s with its delivery %s: %s', (status, delivery, ended) => {
    expect(hasEnded(run(status, null, { status: delivery }))).toBe(ended);
  });
});

describe('completionOf()', () => {
  it.each([
    ['a reply sent', run('ok', 'done', { status: 'sent', attempts: 2 }), 'visible', { status: 'sent', attempts: 2 }],
    [
      'a reply whose delivery failed for good',
      run('ok', 'done', { status: 'failed', attempts: 5 }),
      'visible',
      { status: 'failed', attempts: 5 },
    ],
    [
      'a reply with deliver false',
      run('ok', 'done', { status: 'skipped', reason: 'deliver is false' }),
      'silent',
      { status: 'skipped', attempts: 0 },
    ],
    [
      'only an acknowledgement',
      run('ok', 'HEARTBEAT_OK', { status: 'skipped', reason: 'heartbeat acknowledgement only' }),
      'silent',
      { status: 'skipped', attempts: 0 },
    ],
    ['an empty reply', run('ok', '  \n', { status: 'skipped', reason: 'empty reply' }), 'empty', { status: 'skipped', attempts: 0 }],
    ['a run that failed', run('error', null, { status: 'skipped', reason: 'run failed' }), 'empty', { status: 'skipped', attempts: 0 }],
  ] as const)('%s', (_what, r, replyDisposition, delivery) => {
    expect(completionOf(r, false)).toEqual({ status: r.status, replyDisposition, delivery });
  });

  it('gives the reply text only when allowed, and none for a run without a reply', () => {
    const sent = run('ok', 'the build is green', { status: 'sent', attempts: 1 });
    expect(completionOf(sent, true).reply).toBe('the build is green');
    expect(completionOf(sent, false)).not.toHaveProperty('reply');
    expect(completionOf(run('timeout', null, { status: 'skipped' }), true)).not.toHaveProperty('reply');
  });
});
