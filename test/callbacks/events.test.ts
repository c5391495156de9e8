/**
 * The lifecycle events as outbox entries (docs/callbacks.md, "Events"): one per callback that takes
 * the event, what each says of its run, and none where no callback wants it.
 */
import { describe, expect, it } from 'vitest';
import { deliveryFailedEvents, rejectedEvents, runEvents } from '../../src/callbacks/events.ts';
import type { Run } from '../../src/store/types.ts';
import { callbackSecret } from '../helpers/callback-receiver.ts';
import { newRun, okOutcome } from '../helpers/records.ts';
import { testGeneration } from '../helpers/runtime.ts';

const secret = callbackSecret();
const gen = (types: string[], over: Record<string, unknown> = {}) =>
  testGeneration({
    callbacks: [
      { id: 'a', url: 'https://a.example.com/', secret, types },
      { id: 'b', url: 'https://b.example.com/', secret, types, hooks: ['agent'] },
    ],
    ...over,
  });
const body = (e: { text: string }) => JSON.parse(e.text);

describe('runEvents()', () => {
  it('makes run.failed for an error, with the reason and an empty reply; one entry per callback, the same body', () => {
    const run = newRun({ hookId: 'agent', sessionKey: 'hook:gh:1' });
    const o = okOutcome(run.id, {
      status: 'timeout',
      reply: null,
      error: 'the agent took longer than 600 s',
      finishedAt: Date.UTC(2025, 5, 1, 9, 30),
      delivery: { kind: 'skipped', reason: 'run did not succeed' },
    });
    const entries = runEvents(gen(['run.failed']), run, o);
    expect(entries.map((e) => [e.channel, e.event, e.runId, e.to])).toEqual([
      ['a', 'run.failed', run.id, null],
      ['b', 'run.failed', run.id, null],
    ]);
    expect(entries[0]!.id).not.toBe(entries[1]!.id);
    expect(entries[0]!.text).toBe(entries[1]!.text);
    expect(body(entries[0]!)).toEqual({
      type: 'run.failed',
      timestamp: '2025-06-01T09:30:00.000Z',
      data: {
        runId: run.id,
        hook: 'agent',
        agentId: 'main',
        sessionKey: 'hook:gh:1',
        status: 'timeout',
        replyDisposition: 'empty',
        delivery: { status: 'skipped', reason: 'run did not succeed', channel: null, to: null, attempts: 0 },
        error: 'the agent took longer than 600 s',
      },
    });
  });

  it.each([
    [
      'visible',
      'a reply to deliver',
      'done',
      { kind: 'outbox', entry: { id: 'd', runId: 'r', channel: 'slack', to: '#ops', text: 'done', createdAt: 1 } },
    ],
    ['silent', 'a reply not delivered', 'done', { kind: 'skipped', reason: 'deliver is false' }],
    ['empty', 'a blank reply', '  ', { kind: 'skipped', reason: 'empty reply' }],
  ] as const)('says %s for %s', (disposition, _, reply, delivery) => {
    const run = newRun({ hookId: 'deploys' });
    const [e] = runEvents(gen(['run.completed']), run, okOutcome(run.id, { reply, delivery }));
    expect(body(e!).data.replyDisposition).toBe(disposition);
    expect(body(e!).data.reply).toBeUndefined();
  });

  it('makes none for a heartbeat, for a type no callback takes, and for a hook no callback listens to', () => {
    const hb = newRun({ kind: 'heartbeat' });
    expect(runEvents(gen(['run.completed']), hb, okOutcome(hb.id))).toEqual([]);
    const run = newRun({ hookId: 'deploys' });
    expect(runEvents(gen(['run.failed']), run, okOutcome(run.id))).toEqual([]);
    expect(runEvents(gen(['run.completed']), run, okOutcome(run.id)).map((e) => e.channel)).toEqual(['a']);
  });

  it('carries the reply with hooks.replyInResponse', () => {
    const run = newRun({ hookId: 'agent' });
    const [e] = runEvents(gen(['run.completed'], { hooks: { replyInResponse: true } }), run, okOutcome(run.id, { reply: 'the answer' }));
    expect(body(e!).data.reply).toBe('the answer');
  });
});

describe('deliveryFailedEvents()', () => {
  const stored = (over: Partial<Run> = {}): Run => ({
    ...newRun({ hookId: 'agent' }),
    status: 'ok',
    attempts: 1,
    startedAt: 1,
    finishedAt: 2,
    reply: 'the answer',
    summary: 'the answer',
    error: null,
    delivery: { status: 'pending', reason: 'HTTP 503', channel: 'telegram', to: '42', attempts: 4 },
    usage: null,
    forwarded: null,
    ...over,
  });

  it('makes delivery.failed for a failure for good, with the attempt as the delivery', () => {
    const run = stored();
    const [e] = deliveryFailedEvents(gen(['delivery.failed']), run, {
      id: 'd',
      runId: run.id,
      attempts: 5,
      at: 0,
      status: 'failed',
      error: 'HTTP 400',
    });
    expect(body(e!).data).toEqual({
      runId: run.id,
      hook: 'agent',
      agentId: 'main',
      sessionKey: run.sessionKey,
      status: 'ok',
      replyDisposition: 'visible',
      delivery: { status: 'failed', reason: 'HTTP 400', channel: 'telegram', to: '42', attempts: 5 },
    });
  });

  it('makes none for an attempt that did not fail for good, or a heartbeat', () => {
    const g = gen(['delivery.failed']);
    const a = { id: 'd', runId: 'r', attempts: 1, at: 0, status: 'pending', nextAttemptAt: 5 } as const;
    expect(deliveryFailedEvents(g, stored(), a)).toEqual([]);
    const { hookId: _, ...heartbeat } = stored({ kind: 'heartbeat' });
    expect(deliveryFailedEvents(g, heartbeat, { ...a, status: 'failed' })).toEqual([]);
  });
});

describe('rejectedEvents()', () => {
  it('says which hook, the status and code, and how many were left out: nothing of the request', () => {
    const [e] = rejectedEvents(gen(['request.rejected']), 'agent', 401, 'UNAUTHORIZED', 0, 3);
    expect(e).toMatchObject({ runId: '', channel: 'a', event: 'request.rejected' });
    expect(body(e!)).toEqual({
      type: 'request.rejected',
      timestamp: '1970-01-01T00:00:00.000Z',
      data: { hook: 'agent', status: 401, code: 'UNAUTHORIZED', notReported: 3 },
    });
  });
});
