/** buildOutcome(): a run's outcome and its delivery, the same for hook runs and heartbeats. */
import { afterAll, describe, expect, it } from 'vitest';
import { buildOutcome, type OutcomeInput } from '../../src/runtime/outcome.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { testGeneration } from '../helpers/generation.ts';

const store = new SqliteStore({ path: ':memory:' });
afterAll(() => store.close());
const gen = await testGeneration({
  channels: { console: {}, chat: { type: 'needs-to' } },
  session: { defaultRoute: { channel: 'console' } },
});

const run = { id: 'r1', sessionKey: 's1', deliver: true, channel: 'last', to: null };
const input = (more: Partial<OutcomeInput>): OutcomeInput => ({
  run,
  result: { status: 'ok', text: 'Done.' },
  finishedAt: 2_000,
  prompt: { content: 'Do it', at: 1_000 },
  failedReason: 'run did not succeed',
  ...more,
});

describe('buildOutcome()', () => {
  it('keeps the prompt and the reply as the session lines, summarizes when asked, and routes the reply to the outbox', async () => {
    const o = await buildOutcome(gen, store.records, input({ summarize: true }));
    expect(o).toMatchObject({ id: 'r1', status: 'ok', finishedAt: 2_000, reply: 'Done.', summary: 'Done.', error: null });
    expect(o.messages).toEqual([
      { sessionKey: 's1', role: 'user', content: 'Do it', runId: 'r1', createdAt: 1_000 },
      { sessionKey: 's1', role: 'assistant', content: 'Done.', runId: 'r1', createdAt: 2_000 },
    ]);
    expect(o.delivery).toEqual({
      kind: 'outbox',
      entry: { id: expect.any(String), runId: 'r1', channel: 'console', to: null, text: 'Done.', createdAt: 2_000 },
    });
  });

  it('has no summary unless asked, and marks the entry of a main-session reply', async () => {
    const o = await buildOutcome(gen, store.records, input({ mainSession: true }));
    expect(o.summary).toBeNull();
    expect(o.delivery).toMatchObject({ kind: 'outbox', entry: { mainSession: true } });
  });

  it('summarizes an empty reply as such', async () => {
    const o = await buildOutcome(gen, store.records, input({ summarize: true, result: { status: 'ok', text: '  ' } }));
    expect(o.summary).toBe('(empty reply)');
    expect(o.delivery).toEqual({ kind: 'skipped', reason: 'empty reply' });
  });

  it.each([
    ['deliver is false', { run: { ...run, deliver: false } }, { kind: 'skipped', reason: 'deliver is false' }],
    [
      'an acknowledgement',
      { result: { status: 'ok' as const, text: ' heartbeat_ok\n' } },
      { kind: 'skipped', reason: 'heartbeat acknowledgement only' },
    ],
    [
      'a route that cannot take it, naming the route',
      { run: { ...run, channel: 'chat' } },
      { kind: 'skipped', reason: 'no recipient for channel "chat" (set "to")', channel: 'chat', to: null },
    ],
    [
      'an unknown channel',
      { run: { ...run, channel: 'gone', to: 'x' } },
      { kind: 'skipped', reason: 'channel "gone" is not configured', channel: 'gone', to: 'x' },
    ],
  ])('skips the delivery for %s', async (_what, more, delivery) => {
    expect((await buildOutcome(gen, store.records, input(more))).delivery).toEqual(delivery);
  });

  it('keeps the error of a run that did not succeed, with only its prompt, and skips the delivery with the reason given', async () => {
    const o = await buildOutcome(
      gen,
      store.records,
      input({ result: { status: 'timeout', error: 'no answer in 30 s' }, failedReason: 'heartbeat did not succeed', summarize: true }),
    );
    expect(o).toMatchObject({
      status: 'timeout',
      reply: null,
      summary: null,
      error: 'no answer in 30 s',
      delivery: { kind: 'skipped', reason: 'heartbeat did not succeed' },
    });
    expect(o.messages).toHaveLength(1);
  });

  it('writes no session line when no agent was called', async () => {
    const { prompt: _, ...rest } = input({ result: { status: 'error', error: 'interrupted' } });
    expect((await buildOutcome(gen, store.records, rest)).messages).toEqual([]);
  });
});
