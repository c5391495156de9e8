/**
 * The behaviour every Store driver must show, through the `Store` interface only: run it for a driver
 * with `storeContract(name, open)`, where `open` gives a new, empty store each time.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { wrapExternal } from '../../src/safety/boundary.ts';
import { ConflictError } from '../../src/store/errors.ts';
import { uuidv7 } from '../../src/util/uuid7.ts';
import type { NewRun } from '../../src/store/types.ts';
import type { Store } from '../../src/store/roles.ts';
import { newDelivery, newEvent, newMessage, newRun, okOutcome } from '../helpers/records.ts';
import { callbacksContract } from './contract-callbacks.ts';
import { coalesceContract } from './contract-coalesce.ts';
import { consoleContract } from './contract-console.ts';
import { endsContract } from './contract-ends.ts';
import { sharedRolesContract } from './contract-shared.ts';

/** 100 KiB of text that is not ASCII, so that characters and bytes differ. */
const long = (tag: string, chars = 100 * 1024) => `${tag}: ${'Zürich ✓ '.repeat(Math.ceil(chars / 9))}`.slice(0, chars);
const bytes = (s: string) => Buffer.byteLength(s);
const skipped = { kind: 'skipped', reason: 'ack' } as const;

export function storeContract(name: string, open: () => Promise<Store>): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(() => store.close());

    /** A hook run accepted and started, as the runner does before the agent is called. */
    const started = async (over: Partial<NewRun> = {}, at = 1_500): Promise<NewRun> => {
      const run = newRun(over);
      await store.records.accept({ events: [], runs: [run] });
      const read = (await store.records.queuedRun(run.id))!;
      await store.records.startRun(run.id, at);
      return read;
    };
    /** A heartbeat that consumes `ids` (with `older`, every pending event before them too). */
    const consume = async (ids: string[], older = false, at = 3_000) => {
      const hb = newRun({ kind: 'heartbeat', sessionKey: 'main' });
      await store.records.insertHeartbeat(hb, at - 1);
      await store.records.finishRun(okOutcome(hb.id, { finishedAt: at, delivery: skipped, consumedEventIds: ids, consumeOlder: older }));
      return hb.id;
    };

    describe('accept()', () => {
      it('stores the events, runs and idempotency record of a request together', async () => {
        const run = newRun({ to: '42', thinking: 'low', trusted: true, nameTrusted: true, deliver: false });
        const event = newEvent({ text: 'disk full' });
        await store.records.accept({
          events: [event],
          runs: [run],
          idempotency: { key: 'k', status: 202, body: '{"ok":true}', createdAt: 1, expiresAt: 10 },
        });
        expect(await store.records.getRun(run.id)).toEqual({
          ...run,
          status: 'queued',
          attempts: 0,
          startedAt: null,
          finishedAt: null,
          reply: null,
          summary: null,
          error: null,
          usage: null,
          delivery: { status: 'pending', reason: null, channel: null, to: null, attempts: 0 },
          forwarded: null,
        });
        expect(await store.records.listEvents({ limit: 10 })).toEqual([
          { ...event, status: 'pending', consumedAt: null, heartbeatId: null },
        ]);
        expect(await store.records.getIdempotency('k', 5)).toEqual({
          key: 'k',
          status: 202,
          body: '{"ok":true}',
          createdAt: 1,
          expiresAt: 10,
        });
      });

      it('is atomic: a batch with a run id already taken stores nothing of it', async () => {
        const taken = newRun();
        await store.records.accept({ events: [], runs: [taken] });
        const fresh = newRun();
        await expect(
          store.records.accept({
            events: [newEvent()],
            runs: [fresh, taken],
            idempotency: { key: 'k', status: 200, body: '{}', createdAt: 1, expiresAt: 10 },
          }),
        ).rejects.toBeInstanceOf(ConflictError);
        expect(await store.records.getRun(fresh.id)).toBeUndefined();
        expect(await store.records.listEvents({ limit: 10 })).toEqual([]);
        expect(await store.records.getIdempotency('k', 5)).toBeUndefined();
      });

      it('lets a failing request fail alone when several are accepted at once', async () => {
        const taken = newRun();
        await store.records.accept({ events: [], runs: [taken] });
        const results = await Promise.allSettled([
          store.records.accept({ events: [newEvent()], runs: [newRun()] }),
          store.records.accept({ events: [newEvent()], runs: [taken] }),
          store.records.accept({ events: [newEvent()], runs: [] }),
        ]);
        expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
        expect((await store.records.counts()).runs.queued).toBe(2);
        expect((await store.records.counts()).events.pending).toBe(2);
      });
    });

    describe('idempotency records', () => {
      it('are found until they expire', async () => {
        await store.records.accept({
          events: [],
          runs: [],
          idempotency: { key: 'k', status: 200, body: '{}', createdAt: 1, expiresAt: 10 },
        });
        expect((await store.records.getIdempotency('k', 9))?.status).toBe(200);
        expect(await store.records.getIdempotency('k', 10)).toBeUndefined();
        expect(await store.records.getIdempotency('other', 1)).toBeUndefined();
      });

      it('are pruned once expired, and only then', async () => {
        await store.records.accept({
          events: [],
          runs: [],
          idempotency: { key: 'a', status: 200, body: '{}', createdAt: 1, expiresAt: 10 },
        });
        await store.records.accept({
          events: [],
          runs: [],
          idempotency: { key: 'b', status: 200, body: '{}', createdAt: 1, expiresAt: 20 },
        });
        expect(await store.records.pruneIdempotency(10)).toBe(1);
        expect(await store.records.pruneIdempotency(10)).toBe(0);
        expect(await store.records.getIdempotency('b', 11)).toBeDefined();
      });
    });

    describe('runs', () => {
      it('queuedRun() gives the run as accepted while it is queued, and nothing once started or unknown', async () => {
        const run = newRun({ message: 'first' });
        await store.records.accept({ events: [], runs: [run] });
        expect(await store.records.queuedRun(run.id)).toEqual(run);
        await store.records.startRun(run.id, 1_500);
        expect(await store.records.queuedRun(run.id)).toBeUndefined();
        expect(await store.records.queuedRun('nope')).toBeUndefined();
      });

      it('go queued → running → ok with their attempts, times, reply and summary', async () => {
        const run = await started({}, 1_500);
        expect(await store.records.getRun(run.id)).toMatchObject({ status: 'running', attempts: 1, startedAt: 1_500, finishedAt: null });
        await store.records.finishRun(okOutcome(run.id, { finishedAt: 2_000, reply: 'done', summary: 'done.', delivery: skipped }));
        expect(await store.records.getRun(run.id)).toMatchObject({
          status: 'ok',
          attempts: 1,
          startedAt: 1_500,
          finishedAt: 2_000,
          reply: 'done',
          summary: 'done.',
          error: null,
        });
      });

      it("end ok as forwarded with the other gateway's run id (or none), no reply, the delivery skipped; others are not forwarded", async () => {
        const [named, unnamed, plain] = [await started(), await started(), await started()];
        const forwarded = { kind: 'skipped', reason: 'forwarded' } as const;
        await store.records.finishRun(
          okOutcome(named.id, { reply: null, summary: null, delivery: forwarded, forwarded: { runId: 'gw-7' } }),
        );
        await store.records.finishRun(
          okOutcome(unnamed.id, { reply: null, summary: null, delivery: forwarded, forwarded: { runId: null } }),
        );
        await store.records.finishRun(okOutcome(plain.id, { delivery: skipped }));
        expect(await store.records.getRun(named.id)).toMatchObject({
          status: 'ok',
          reply: null,
          forwarded: { runId: 'gw-7' },
          delivery: { status: 'skipped', reason: 'forwarded' },
        });
        expect((await store.records.getRun(unnamed.id))?.forwarded).toEqual({ runId: null });
        expect((await store.records.getRun(plain.id))?.forwarded).toBeNull();
        const listed = await store.records.listRuns({ limit: 10 });
        expect(listed.map((r) => r.forwarded)).toEqual([null, { runId: null }, { runId: 'gw-7' }]);
      });

      it('end as error or timeout with the reason, and no reply', async () => {
        const failed = await started();
        const slow = await started();
        await store.records.finishRun({
          ...okOutcome(failed.id, { delivery: { kind: 'skipped', reason: 'run did not succeed' } }),
          status: 'error',
          reply: null,
          summary: null,
          error: 'HTTP 500',
        });
        await store.records.finishRun({
          ...okOutcome(slow.id, { delivery: { kind: 'skipped', reason: 'run did not succeed' } }),
          status: 'timeout',
          reply: null,
          summary: null,
          error: 'timed out',
        });
        expect(await store.records.getRun(failed.id)).toMatchObject({
          status: 'error',
          reply: null,
          error: 'HTTP 500',
          delivery: { status: 'skipped', reason: 'run did not succeed' },
        });
        expect(await store.records.getRun(slow.id)).toMatchObject({ status: 'timeout', error: 'timed out' });
      });

      it('keep the token usage their outcome reports, in reads and lists; none reported is null', async () => {
        const counted = await started();
        const failed = await started();
        const silent = await started();
        await store.records.finishRun(okOutcome(counted.id, { usage: { inputTokens: 1_234_567, outputTokens: 89 }, delivery: skipped }));
        await store.records.finishRun({
          ...okOutcome(failed.id, { usage: { inputTokens: 0, outputTokens: 0 }, delivery: skipped }),
          status: 'error',
          reply: null,
          error: 'x',
        });
        await store.records.finishRun(okOutcome(silent.id, { delivery: skipped }));
        expect((await store.records.getRun(counted.id))!.usage).toEqual({ inputTokens: 1_234_567, outputTokens: 89 });
        expect((await store.records.getRun(failed.id))!.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
        expect((await store.records.getRun(silent.id))!.usage).toBeNull();
        const listed = await store.records.listRuns({ limit: 10 });
        expect(Object.fromEntries(listed.map((r) => [r.id, r.usage]))).toEqual({
          [counted.id]: { inputTokens: 1_234_567, outputTokens: 89 },
          [failed.id]: { inputTokens: 0, outputTokens: 0 },
          [silent.id]: null,
        });
      });

      it("keep a heartbeat's token usage", async () => {
        const hb = newRun({ kind: 'heartbeat', sessionKey: 'main' });
        await store.records.insertHeartbeat(hb, 1_500);
        expect((await store.records.getRun(hb.id))!.usage).toBeNull();
        await store.records.finishRun(okOutcome(hb.id, { usage: { inputTokens: 7, outputTokens: 3 }, delivery: skipped }));
        expect((await store.records.getRun(hb.id))!.usage).toEqual({ inputTokens: 7, outputTokens: 3 });
      });

      it('a start and a finish given at once make one started, finished run with one attempt', async () => {
        const run = newRun();
        await store.records.accept({ events: [], runs: [run] });
        await Promise.all([store.records.startRun(run.id, 1_500), store.records.finishRun(okOutcome(run.id, { delivery: skipped }))]);
        expect(await store.records.getRun(run.id)).toMatchObject({ status: 'ok', attempts: 1, startedAt: 1_500, finishedAt: 2_000 });
      });

      it('are requeued with the attempt given back when asked, kept otherwise; only running runs', async () => {
        const run = await started();
        await store.records.requeueRun(run.id, { refundAttempt: true });
        expect(await store.records.getRun(run.id)).toMatchObject({ status: 'queued', attempts: 0 });
        await store.records.startRun(run.id, 1_600);
        await store.records.requeueRun(run.id, { refundAttempt: false });
        expect(await store.records.getRun(run.id)).toMatchObject({ status: 'queued', attempts: 1 });
        await store.records.requeueRun(run.id, { refundAttempt: true });
        expect(await store.records.getRun(run.id)).toMatchObject({ status: 'queued', attempts: 1 });
        expect((await store.records.queuedRun(run.id))?.id).toBe(run.id);
      });

      it('lists newest first, with a limit and a status filter', async () => {
        const runs = [newRun(), newRun(), newRun()];
        for (const r of runs) await store.records.accept({ events: [], runs: [r] });
        await store.records.startRun(runs[1]!.id, 5);
        const ids = (rs: { id: string }[]) => rs.map((r) => r.id);
        expect(ids(await store.records.listRuns({ limit: 10 }))).toEqual([runs[2]!.id, runs[1]!.id, runs[0]!.id]);
        expect(ids(await store.records.listRuns({ limit: 2 }))).toEqual([runs[2]!.id, runs[1]!.id]);
        expect(ids(await store.records.listRuns({ limit: 10, status: 'queued' }))).toEqual([runs[2]!.id, runs[0]!.id]);
        expect(ids(await store.records.listRuns({ limit: 10, status: 'running' }))).toEqual([runs[1]!.id]);
        expect(await store.records.listRuns({ limit: 10, status: 'ok' })).toEqual([]);
      });

      it('lists filtered by a part of the hook name in any case and a part of the session key, with the status too', async () => {
        const runs = [
          newRun({ hookName: 'GitHub', sessionKey: 'hook:gh:1' }),
          newRun({ hookName: 'Deploys', sessionKey: 'hook:deploy:1' }),
          newRun({ hookName: 'GitHub', sessionKey: 'hook:gh:2' }),
          newRun({ hookName: 'Gmail', sessionKey: 'hook:gmail:abc' }),
        ];
        for (const r of runs) await store.records.accept({ events: [], runs: [r] });
        await store.records.startRun(runs[0]!.id, 5);
        const ids = (rs: { id: string }[]) => rs.map((r) => r.id);
        const [gh1, deploy, gh2, gmail] = runs.map((r) => r.id);
        expect(ids(await store.records.listRuns({ limit: 10, hook: 'github' }))).toEqual([gh2, gh1]);
        expect(ids(await store.records.listRuns({ limit: 1, hook: 'GITHUB' }))).toEqual([gh2]);
        expect(ids(await store.records.listRuns({ limit: 10, hook: 'g' }))).toEqual([gmail, gh2, gh1]);
        expect(ids(await store.records.listRuns({ limit: 10, session: 'hook:gh:' }))).toEqual([gh2, gh1]);
        expect(ids(await store.records.listRuns({ limit: 10, session: 'HOOK:GH:' }))).toEqual([]);
        expect(ids(await store.records.listRuns({ limit: 10, session: 'deploy' }))).toEqual([deploy]);
        expect(ids(await store.records.listRuns({ limit: 10, hook: 'github', status: 'running' }))).toEqual([gh1]);
        expect(ids(await store.records.listRuns({ limit: 10, hook: 'github', session: ':2' }))).toEqual([gh2]);
        expect(await store.records.listRuns({ limit: 10, hook: 'nothing' })).toEqual([]);
      });

      it('unfinishedRuns() gives the hook runs queued or running, oldest first, for recovery', async () => {
        const a = newRun();
        const b = newRun();
        const done = newRun();
        await store.records.accept({ events: [], runs: [a, b, done] });
        await store.records.startRun(b.id, 5);
        await store.records.startRun(done.id, 5);
        await store.records.finishRun(okOutcome(done.id, { delivery: skipped }));
        await store.records.insertHeartbeat(newRun({ kind: 'heartbeat', sessionKey: 'main' }), 6);
        expect((await store.records.unfinishedRuns()).map((r) => [r.id, r.status])).toEqual([
          [a.id, 'queued'],
          [b.id, 'running'],
        ]);
      });

      it('insertHeartbeat() stores a heartbeat already running, with one attempt', async () => {
        const hb = newRun({ kind: 'heartbeat', sessionKey: 'main' });
        await store.records.insertHeartbeat(hb, 7);
        expect(await store.records.getRun(hb.id)).toMatchObject({ kind: 'heartbeat', status: 'running', attempts: 1, startedAt: 7 });
      });

      it('failInterruptedHeartbeats() ends the heartbeats left running as error, and only those', async () => {
        const hb = newRun({ kind: 'heartbeat', sessionKey: 'main' });
        await store.records.insertHeartbeat(hb, 7);
        const hook = await started();
        expect(await store.records.failInterruptedHeartbeats(9, 'interrupted')).toBe(1);
        expect(await store.records.getRun(hb.id)).toMatchObject({ status: 'error', finishedAt: 9, error: 'interrupted' });
        expect((await store.records.getRun(hook.id))!.status).toBe('running');
        expect(await store.records.failInterruptedHeartbeats(10, 'interrupted')).toBe(0);
      });
    });

    describe('transcripts', () => {
      it("keep a session's lines in order with positive ids: transcript() oldest first, listMessages() newest first, each with a limit", async () => {
        const run = await started({ sessionKey: 'hook:s' });
        const lines = ['one', 'two', 'three'].map((content, i) =>
          newMessage({ sessionKey: 'hook:s', content, runId: run.id, createdAt: i }),
        );
        await store.records.finishRun(okOutcome(run.id, { messages: lines, delivery: skipped }));
        await store.records.finishRun(
          okOutcome((await started({ sessionKey: 'other' })).id, { messages: [newMessage({ sessionKey: 'other' })], delivery: skipped }),
        );
        const all = await store.records.transcript('hook:s', 10);
        expect(all.map((m) => m.content)).toEqual(['one', 'two', 'three']);
        expect(all.every((m, i) => m.id > 0 && (i === 0 || m.id > all[i - 1]!.id))).toBe(true);
        expect(all[0]).toEqual({ id: all[0]!.id, sessionKey: 'hook:s', role: 'user', content: 'one', runId: run.id, createdAt: 0 });
        expect((await store.records.transcript('hook:s', 2)).map((m) => m.content)).toEqual(['two', 'three']);
        expect((await store.records.listMessages('hook:s', { limit: 2 })).map((m) => m.content)).toEqual(['three', 'two']);
        expect(await store.records.transcript('nobody', 10)).toEqual([]);
      });

      it('transcript() stops at a byte budget, keeping the newest line whatever its size', async () => {
        const run = await started({ sessionKey: 'big' });
        const contents = ['a', 'b', 'c', 'd'].map((c) => c.repeat(250));
        await store.records.finishRun(
          okOutcome(run.id, { messages: contents.map((content) => newMessage({ sessionKey: 'big', content })), delivery: skipped }),
        );
        const firsts = async (limit: number, max: number) => (await store.records.transcript('big', limit, max)).map((m) => m.content[0]);
        expect(await firsts(10, 1000)).toEqual(['a', 'b', 'c', 'd']);
        expect(await firsts(10, 999)).toEqual(['b', 'c', 'd']);
        expect(await firsts(10, 500)).toEqual(['c', 'd']);
        expect(await firsts(10, 10)).toEqual(['d']);
        expect(await firsts(2, 1000)).toEqual(['c', 'd']);
      });

      it("count a line's bytes in UTF-8, as read back", async () => {
        const run = await started({ sessionKey: 'utf' });
        const [x, y] = ['é'.repeat(100), wrapExternal('ü'.repeat(50), 'Webhook')];
        await store.records.finishRun(
          okOutcome(run.id, {
            messages: [newMessage({ sessionKey: 'utf', content: x }), newMessage({ sessionKey: 'utf', content: y })],
            delivery: skipped,
          }),
        );
        expect((await store.records.transcript('utf', 10, bytes(x) + bytes(y))).map((m) => m.content)).toEqual([x, y]);
        expect((await store.records.transcript('utf', 10, bytes(x) + bytes(y) - 1)).map((m) => m.content)).toEqual([y]);
      });
    });

    describe('texts', () => {
      it('keep long texts whole everywhere they are read: message, reply, transcript, delivery', async () => {
        const run = await started({ message: long('request') });
        const reply = long('answer', 50_000);
        const entry = newDelivery(run.id, { text: reply });
        const messages = [
          newMessage({ sessionKey: run.sessionKey, content: run.message, runId: run.id }),
          newMessage({ sessionKey: run.sessionKey, role: 'assistant', content: reply, runId: run.id }),
        ];
        await store.records.finishRun(okOutcome(run.id, { reply, messages, delivery: { kind: 'outbox', entry } }));
        expect(await store.records.getRun(run.id)).toMatchObject({ message: run.message, reply });
        expect((await store.records.transcript(run.sessionKey, 10)).map((m) => m.content)).toEqual([run.message, reply]);
        expect((await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10)).map((d) => d.text)).toEqual([reply]);
      });

      it('an echo: a reply equal to the long message reads back whole', async () => {
        const run = await started({ message: long('echo') });
        const messages = [
          newMessage({ sessionKey: run.sessionKey, content: run.message }),
          newMessage({ sessionKey: run.sessionKey, role: 'assistant', content: run.message }),
        ];
        await store.records.finishRun(
          okOutcome(run.id, {
            reply: run.message,
            messages,
            delivery: { kind: 'outbox', entry: newDelivery(run.id, { text: run.message }) },
          }),
        );
        expect((await store.records.getRun(run.id))!.reply).toBe(run.message);
        expect((await store.records.transcript(run.sessionKey, 10)).map((m) => m.content)).toEqual([run.message, run.message]);
        expect((await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10))[0]!.text).toBe(run.message);
      });

      it('keep texts with safety boundaries byte for byte, in every record', async () => {
        const message = wrapExternal('Disk usage on db-3 is at 91%.', 'Monitoring');
        const reply = `You said:\n${message}`;
        const summary = `Hook agent: ${wrapExternal('You said: disk usage', 'Webhook')}`;
        const wake = newEvent({ text: wrapExternal('deploy finished', 'Wake') });
        const run = newRun({ message });
        await store.records.accept({ events: [wake], runs: [run] });
        expect((await store.records.queuedRun(run.id))!.message).toBe(message);
        await store.records.startRun(run.id, 1_500);
        const messages = [
          newMessage({ sessionKey: run.sessionKey, content: message }),
          newMessage({ sessionKey: run.sessionKey, role: 'assistant', content: reply }),
        ];
        const event = newEvent({ source: 'run', text: summary, runId: run.id });
        await store.records.finishRun(
          okOutcome(run.id, { reply, messages, event, delivery: { kind: 'outbox', entry: newDelivery(run.id, { text: reply }) } }),
        );
        expect(await store.records.getRun(run.id)).toMatchObject({ message, reply });
        expect((await store.records.transcript(run.sessionKey, 10)).map((m) => m.content)).toEqual([message, reply]);
        expect((await store.records.pendingEvents(10)).map((e) => e.text)).toEqual([wake.text, summary]);
        expect((await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10)).map((d) => d.text)).toEqual([reply]);
      });
    });

    describe('events', () => {
      it('are pending until a heartbeat consumes them, then consumed by it; pendingEvents() oldest first', async () => {
        const [a, b, c] = ['a', 'b', 'c'].map((text) => newEvent({ text }));
        await store.records.accept({ events: [a!, b!, c!], runs: [] });
        expect((await store.records.pendingEvents(10)).map((e) => e.text)).toEqual(['a', 'b', 'c']);
        expect((await store.records.pendingEvents(2)).map((e) => e.text)).toEqual(['a', 'b']);
        const shown = await store.records.pendingEvents(2);
        const hb = await consume(shown.map((e) => e.id));
        expect((await store.records.pendingEvents(10)).map((e) => e.text)).toEqual(['c']);
        expect((await store.records.listEvents({ limit: 10 })).map((e) => [e.text, e.status, e.heartbeatId, e.consumedAt])).toEqual([
          ['c', 'pending', null, null],
          ['b', 'consumed', hb, 3_000],
          ['a', 'consumed', hb, 3_000],
        ]);
      });

      it('list newest first with a limit and a status filter', async () => {
        const events = ['a', 'b', 'c', 'd'].map((text) => newEvent({ text }));
        await store.records.accept({ events, runs: [] });
        await consume([events[0]!.id, events[1]!.id]);
        const texts = (es: { text: string }[]) => es.map((e) => e.text);
        expect(texts(await store.records.listEvents({ limit: 10 }))).toEqual(['d', 'c', 'b', 'a']);
        expect(texts(await store.records.listEvents({ limit: 1 }))).toEqual(['d']);
        expect(texts(await store.records.listEvents({ limit: 10, status: 'pending' }))).toEqual(['d', 'c']);
        expect(texts(await store.records.listEvents({ limit: 10, status: 'consumed' }))).toEqual(['b', 'a']);
      });

      it('getEvent() reads one by id, pending or consumed; an id the dispatcher did not make is found too', async () => {
        // the dispatcher's ids: UUIDv7 made at createdAt; times spread over days, several in one millisecond
        const times = Array.from({ length: 300 }, (_, i) => 1_700_000_000_000 + Math.floor(i / 3) * 3_600_000);
        const events = times.map((t, i) => newEvent({ id: uuidv7(t), text: `e${i}`, createdAt: t }));
        for (let i = 0; i < events.length; i += 50) await store.records.accept({ events: events.slice(i, i + 50), runs: [] });
        const other = newEvent({ text: 'not a UUIDv7 id', createdAt: times.at(-1)! });
        await store.records.accept({ events: [other], runs: [] });
        await consume(events.slice(0, 10).map((e) => e.id));
        for (const i of [0, 9, 10, 151, 298, 299]) {
          const e = events[i]!;
          expect(await store.records.getEvent(e.id)).toMatchObject({
            id: e.id,
            text: e.text,
            createdAt: e.createdAt,
            status: i < 10 ? 'consumed' : 'pending',
          });
        }
        expect((await store.records.getEvent(other.id))?.text).toBe('not a UUIDv7 id');
        expect(await store.records.getEvent(uuidv7(times[100]!))).toBeUndefined();
        expect(await store.records.getEvent('nope')).toBeUndefined();
      });

      it('a consumed set that is not the oldest pending ones leaves the others pending', async () => {
        const events = ['a', 'b', 'c'].map((text) => newEvent({ text }));
        await store.records.accept({ events, runs: [] });
        await store.records.pendingEvents(10);
        await consume([events[1]!.id]);
        expect((await store.records.pendingEvents(10)).map((e) => e.text)).toEqual(['a', 'c']);
        expect((await store.records.counts()).events).toEqual({ pending: 2, consumed: 1 });
      });

      it("a finish's summary event is pending, with its run", async () => {
        const run = await started();
        await store.records.finishRun(
          okOutcome(run.id, { event: newEvent({ source: 'run', text: 'Hook: done', runId: run.id }), delivery: skipped }),
        );
        expect(await store.records.pendingEvents(10)).toEqual([
          expect.objectContaining({ source: 'run', text: 'Hook: done', runId: run.id, status: 'pending' }),
        ]);
      });
    });

    describe('pendingBacklog()', () => {
      it('shows every pending event when they fit, with nothing older', async () => {
        await store.records.accept({ events: ['a', 'b'].map((text) => newEvent({ text })), runs: [] });
        const b = await store.records.pendingBacklog(5);
        expect(b.events.map((e) => e.text)).toEqual(['a', 'b']);
        expect(b.older).toEqual({ count: 0, bySource: {}, firstAt: null, lastAt: null });
      });

      it('shows the newest, oldest first, counts the older ones by source, and a heartbeat consumes them all', async () => {
        const events = [
          newEvent({ source: 'wake', text: '1', createdAt: 10 }),
          newEvent({ source: 'github', text: '2', createdAt: 20 }),
          newEvent({ source: 'wake', text: '3', createdAt: 30 }),
          newEvent({ source: 'wake', text: '4', createdAt: 40 }),
          newEvent({ source: 'wake', text: '5', createdAt: 50 }),
        ];
        await store.records.accept({ events, runs: [] });
        const b = await store.records.pendingBacklog(2);
        expect(b.events.map((e) => e.text)).toEqual(['4', '5']);
        expect(b.older).toEqual({ count: 3, bySource: { wake: 2, github: 1 }, firstAt: 10, lastAt: 30 });
        await store.records.accept({ events: [newEvent({ text: '6' })], runs: [] });
        await consume(
          b.events.map((e) => e.id),
          true,
        );
        expect((await store.records.pendingEvents(10)).map((e) => e.text)).toEqual(['6']);
        expect((await store.records.counts()).events).toEqual({ pending: 1, consumed: 5 });
      });
    });

    it('counts events, runs and deliveries by status', async () => {
      const [queued, ok, failed] = [newRun(), newRun(), newRun()];
      await store.records.accept({ events: [newEvent(), newEvent()], runs: [queued, ok, failed] });
      await store.records.startRun(ok.id, 5);
      await store.records.startRun(failed.id, 5);
      expect((await store.records.counts()).runs).toEqual({ queued: 1, running: 2, ok: 0, error: 0, timeout: 0 });
      const entry = newDelivery(ok.id);
      await store.records.finishRun(okOutcome(ok.id, { delivery: { kind: 'outbox', entry } }));
      await store.records.finishRun({ ...okOutcome(failed.id, { delivery: skipped }), status: 'error', reply: null, error: 'x' });
      await consume([(await store.records.pendingEvents(1))[0]!.id]);
      // the heartbeat that consumed an event is a run too
      expect(await store.records.counts()).toEqual({
        events: { pending: 1, consumed: 1 },
        runs: { queued: 1, running: 0, ok: 2, error: 1, timeout: 0 },
        outbox: { pending: 1, failed: 0 },
      });
      await store.records.recordDelivery({ id: entry.id, runId: ok.id, attempts: 5, at: 3_000, status: 'failed', error: 'HTTP 400' });
      expect((await store.records.counts()).outbox).toEqual({ pending: 0, failed: 1 });
    });

    describe('deliveries', () => {
      it('are due from their time, earliest first, and nextDeliveryAt() tells when', async () => {
        const [r1, r2] = [await started(), await started()];
        const late = newDelivery(r1.id, { createdAt: 5_000 });
        const soon = newDelivery(r2.id, { createdAt: 4_000 });
        await store.records.finishRun(okOutcome(r1.id, { delivery: { kind: 'outbox', entry: late } }));
        await store.records.finishRun(okOutcome(r2.id, { delivery: { kind: 'outbox', entry: soon } }));
        expect(await store.records.dueDeliveries(3_999, 10)).toEqual([]);
        expect((await store.records.dueDeliveries(5_000, 10)).map((d) => d.id)).toEqual([soon.id, late.id]);
        expect((await store.records.dueDeliveries(5_000, 1)).map((d) => d.id)).toEqual([soon.id]);
        expect(await store.records.nextDeliveryAt()).toBe(4_000);
        expect(await store.records.nextDeliveryAt(4_000)).toBe(5_000);
        expect(await store.records.nextDeliveryAt(5_000)).toBeUndefined();
        expect((await store.records.getRun(r1.id))!.delivery).toEqual({
          status: 'pending',
          reason: null,
          channel: 'console',
          to: null,
          attempts: 0,
        });
      });

      it('a retry waits for its time with its error; the parts sent are kept until changed', async () => {
        const run = await started();
        const entry = newDelivery(run.id, { createdAt: 2_000 });
        await store.records.finishRun(okOutcome(run.id, { delivery: { kind: 'outbox', entry } }));
        await store.records.recordDelivery({
          id: entry.id,
          runId: run.id,
          attempts: 1,
          at: 2_100,
          status: 'pending',
          nextAttemptAt: 4_000,
          error: 'HTTP 503',
          sentParts: 2,
        });
        expect(await store.records.dueDeliveries(3_999, 10)).toEqual([]);
        expect(await store.records.dueDeliveries(4_000, 10)).toEqual([
          expect.objectContaining({
            id: entry.id,
            attempts: 1,
            lastError: 'HTTP 503',
            sentParts: 2,
            nextAttemptAt: 4_000,
            updatedAt: 2_100,
            status: 'pending',
          }),
        ]);
        expect((await store.records.getRun(run.id))!.delivery).toMatchObject({ status: 'pending', reason: 'HTTP 503', attempts: 1 });
        await store.records.recordDelivery({
          id: entry.id,
          runId: run.id,
          attempts: 2,
          at: 4_100,
          status: 'pending',
          nextAttemptAt: 5_000,
          error: 'HTTP 503',
        });
        expect((await store.records.dueDeliveries(5_000, 10))[0]!.sentParts).toBe(2);
      });

      it('have no parts until given; the parts, the parts sent and the ambiguous part are each kept until changed', async () => {
        const run = await started();
        const entry = newDelivery(run.id);
        await store.records.finishRun(okOutcome(run.id, { delivery: { kind: 'outbox', entry } }));
        const due = async () => (await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10))[0]!;
        expect(await due()).toMatchObject({ parts: null, sentParts: 0, ambiguousPart: null });
        const base = { id: entry.id, runId: run.id, status: 'pending', nextAttemptAt: 3_000 } as const;
        await store.records.recordDelivery({ ...base, attempts: 0, at: 2_100, parts: ['one', 'two', 'three'] });
        expect(await due()).toMatchObject({ parts: ['one', 'two', 'three'], sentParts: 0, ambiguousPart: null, attempts: 0 });
        await store.records.recordDelivery({ ...base, attempts: 0, at: 2_200, sentParts: 1 });
        await store.records.recordDelivery({ ...base, attempts: 1, at: 2_300, error: 'timed out', ambiguousPart: 1 });
        expect(await due()).toMatchObject({
          parts: ['one', 'two', 'three'],
          sentParts: 1,
          ambiguousPart: 1,
          attempts: 1,
          lastError: 'timed out',
        });
        await store.records.recordDelivery({ ...base, attempts: 1, at: 2_400, sentParts: 2, ambiguousPart: null });
        expect(await due()).toMatchObject({ parts: ['one', 'two', 'three'], sentParts: 2, ambiguousPart: null });
      });

      it('keep many long parts whole, and keep them when a short list replaces a long one and back', async () => {
        const run = await started();
        const entry = newDelivery(run.id, { text: long('reply', 20_000) });
        await store.records.finishRun(okOutcome(run.id, { delivery: { kind: 'outbox', entry } }));
        const parts = [long('first', 4_000), long('second', 4_000), 'a "quoted" \\ tail\n'];
        const base = { id: entry.id, runId: run.id, attempts: 0, at: 2_100, status: 'pending' } as const;
        const due = async () => (await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10))[0]!;
        await store.records.recordDelivery({ ...base, parts });
        expect((await due()).parts).toEqual(parts);
        await store.records.recordDelivery({ ...base, parts: ['short'] });
        expect((await due()).parts).toEqual(['short']);
        await store.records.recordDelivery({ ...base, parts });
        expect(await due()).toMatchObject({ parts, text: entry.text });
      });

      it('a reply of the main session is marked so; others are not', async () => {
        const [a, b] = [await started(), await started()];
        const [ea, eb] = [newDelivery(a.id, { mainSession: true }), newDelivery(b.id)];
        await store.records.finishRun(okOutcome(a.id, { delivery: { kind: 'outbox', entry: ea } }));
        await store.records.finishRun(okOutcome(b.id, { delivery: { kind: 'outbox', entry: eb } }));
        const due = await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10);
        expect(Object.fromEntries(due.map((d) => [d.id, d.mainSession]))).toEqual({ [ea.id]: true, [eb.id]: false });
      });

      it('a send marks it sent on the run and remembers the main route; a failure for good leaves the route', async () => {
        const [a, b] = [await started(), await started()];
        const [ea, eb] = [newDelivery(a.id), newDelivery(b.id)];
        await store.records.finishRun(okOutcome(a.id, { delivery: { kind: 'outbox', entry: ea } }));
        await store.records.finishRun(okOutcome(b.id, { delivery: { kind: 'outbox', entry: eb } }));
        await store.records.recordDelivery({
          id: ea.id,
          runId: a.id,
          attempts: 1,
          at: 2_100,
          status: 'sent',
          route: { channel: 'telegram', to: '42' },
        });
        expect((await store.records.getRun(a.id))!.delivery).toEqual({
          status: 'sent',
          reason: null,
          channel: 'console',
          to: null,
          attempts: 1,
        });
        expect(JSON.parse((await store.records.getMeta('mainRoute'))!)).toEqual({ channel: 'telegram', to: '42' });
        await store.records.recordDelivery({ id: eb.id, runId: b.id, attempts: 5, at: 2_200, status: 'failed', error: 'HTTP 400' });
        expect((await store.records.getRun(b.id))!.delivery).toMatchObject({ status: 'failed', reason: 'HTTP 400', attempts: 5 });
        expect(JSON.parse((await store.records.getMeta('mainRoute'))!)).toEqual({ channel: 'telegram', to: '42' });
        expect(await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
        expect(await store.records.nextDeliveryAt()).toBeUndefined();
      });

      it('a skipped delivery is recorded on the run with its reason, and nothing is queued', async () => {
        const run = await started();
        await store.records.finishRun(
          okOutcome(run.id, { delivery: { kind: 'skipped', reason: 'deliver is false', channel: 'slack', to: '#ops' } }),
        );
        expect((await store.records.getRun(run.id))!.delivery).toEqual({
          status: 'skipped',
          reason: 'deliver is false',
          channel: 'slack',
          to: '#ops',
          attempts: 0,
        });
        expect(await store.records.dueDeliveries(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
      });
    });

    callbacksContract(() => store);
    consoleContract(() => store);
    sharedRolesContract(() => store);
    coalesceContract(() => store);
    endsContract(() => store);

    it('keeps meta values and overwrites them', async () => {
      expect(await store.records.getMeta('k')).toBeUndefined();
      await store.records.setMeta('k', 'one');
      await store.records.setMeta('k', 'two');
      expect(await store.records.getMeta('k')).toBe('two');
    });

    it('close() lets writes already given finish first, and may be called twice', async () => {
      const run = newRun();
      const accepted = store.records.accept({ events: [], runs: [run] });
      const meta = store.records.setMeta('last', 'x');
      await store.close();
      await expect(accepted).resolves.toEqual({});
      await expect(meta).resolves.toBeUndefined();
      await store.close();
      store = await open(); // for afterEach
    });
  });
}
