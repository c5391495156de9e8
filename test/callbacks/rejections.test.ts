/**
 * `request.rejected` (docs/callbacks.md, "Events"): a 401 of a hook the service has is stored as events
 * after the answer, at most REJECTIONS_PER_MINUTE a minute per process; the next one stored says how many
 * were left out.
 */
import { describe, expect, it } from 'vitest';
import { REJECTIONS_PER_MINUTE, RejectionEvents, rejectedHook } from '../../src/callbacks/rejections.ts';
import { errors } from '../../src/errors.ts';
import type { AcceptBatch, NewDelivery } from '../../src/store/types.ts';
import { callbackSecret } from '../helpers/callback-receiver.ts';
import { until } from '../helpers/cli.ts';
import { captureLogger, testGeneration } from '../helpers/runtime.ts';

const gen = testGeneration({
  callbacks: [{ id: 'audit', url: 'https://audit.example.com/', secret: callbackSecret(), types: ['request.rejected'] }],
});

function reporter() {
  const batches: AcceptBatch[] = [];
  const notified: NewDelivery[] = [];
  const log = captureLogger('warn');
  const events = new RejectionEvents({
    records: { accept: async (b) => (batches.push(b), {}) },
    notifyOutbox: (e) => notified.push(e),
    logger: log.logger,
  });
  return { events, batches, notified, log };
}
const dataOf = (b: AcceptBatch) => JSON.parse(b.callbacks![0]!.text).data;

describe('RejectionEvents', () => {
  it('stores the events of a refused token with nothing else, and hands them to the outbox once stored', async () => {
    const { events, batches, notified } = reporter();
    events.report(gen, 'agent', errors.unauthorized(), 1_000);
    expect(batches).toEqual([
      { events: [], runs: [], callbacks: [expect.objectContaining({ channel: 'audit', event: 'request.rejected' })] },
    ]);
    await until(() => notified.length === 1);
    expect(notified[0]).toBe(batches[0]!.callbacks![0]);
  });

  it('ignores answers other than 401, and paths no hook answers', () => {
    const { events, batches } = reporter();
    events.report(gen, 'agent', errors.rateLimited(30), 1_000);
    events.report(gen, 'agent', errors.forbidden(), 1_000);
    events.report(gen, 'nowhere', errors.unauthorized(), 1_000);
    expect(batches).toEqual([]);
  });

  it(`stores at most ${REJECTIONS_PER_MINUTE} a minute; the next one stored counts those left out`, () => {
    const { events, batches, log } = reporter();
    for (let i = 0; i < REJECTIONS_PER_MINUTE + 5; i++) events.report(gen, 'wake', errors.unauthorized(), 1_000 + i);
    expect(batches).toHaveLength(REJECTIONS_PER_MINUTE);
    expect(batches.map(dataOf).every((d) => d.notReported === 0)).toBe(true);
    events.report(gen, 'wake', errors.invalidSignature(), 61_000);
    expect(batches).toHaveLength(REJECTIONS_PER_MINUTE + 1);
    expect(dataOf(batches.at(-1)!)).toEqual({ hook: 'wake', status: 401, code: 'INVALID_SIGNATURE', notReported: 5 });
    expect(log.text()).toContain('"notReported":5');
  });

  it('logs a failure to store, never throws', async () => {
    const log = captureLogger('warn');
    const events = new RejectionEvents({
      records: { accept: async () => Promise.reject(new Error('disk full')) },
      notifyOutbox: () => {},
      logger: log.logger,
    });
    events.report(gen, 'agent', errors.unauthorized(), 1_000);
    await until(() => log.text().includes('a request.rejected event was not stored'));
  });
});

describe('rejectedHook()', () => {
  it('names wake and agent, and otherwise no hook when no mapping has the path', () => {
    expect(rejectedHook(gen, 'wake')).toBe('wake');
    expect(rejectedHook(gen, 'agent')).toBe('agent');
    expect(rejectedHook(gen, 'github')).toBeUndefined();
  });
});
