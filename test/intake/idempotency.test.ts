/**
 * Idempotency (docs/http.md, "Idempotency"): which header supplies the key, and the guard that
 * runs a keyed request's work once, even for concurrent repeats.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { IdempotencyGuard, idempotencyKey, type Answer } from '../../src/intake/idempotency.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { IdempotencyTakenError } from '../../src/store/errors.ts';
import type { IdempotencyRecord } from '../../src/store/types.ts';

describe('idempotencyKey()', () => {
  it.each([
    ['no header', {}, undefined],
    ['Idempotency-Key', { 'idempotency-key': 'a' }, 'a'],
    ['webhook-id', { 'webhook-id': 'msg_1' }, 'msg_1'],
    ['X-GitHub-Delivery', { 'x-github-delivery': '72d3162e' }, '72d3162e'],
    ['Idempotency-Key before the others', { 'idempotency-key': 'a', 'webhook-id': 'b', 'x-github-delivery': 'c' }, 'a'],
    ['webhook-id before X-GitHub-Delivery', { 'webhook-id': 'b', 'x-github-delivery': 'c' }, 'b'],
    ['the next header when one is blank', { 'idempotency-key': '  ', 'webhook-id': 'b' }, 'b'],
    ['a trimmed value', { 'idempotency-key': '  padded  ' }, 'padded'],
    ['the first of repeated headers', { 'idempotency-key': ['first', 'second'] }, 'first'],
    ['a key of exactly 256 characters', { 'idempotency-key': 'k'.repeat(256) }, 'k'.repeat(256)],
  ])('takes %s', (_what, headers, key) => {
    expect(idempotencyKey(headers)).toBe(key);
  });

  it('refuses a key over 256 characters with 400 naming the header', () => {
    expect(() => idempotencyKey({ 'webhook-id': 'k'.repeat(257) })).toThrow(
      expect.objectContaining({ status: 400, code: 'INVALID_PAYLOAD', field: 'webhook-id' }),
    );
  });
});

/** A store (SQLite in memory) holding `records`, with its look-ups watched. */
async function storeWith(...records: IdempotencyRecord[]) {
  const store = new SqliteStore({ path: ':memory:' });
  stores.push(store);
  for (const idempotency of records) await store.records.accept({ events: [], runs: [], idempotency });
  return { store, getIdempotency: vi.spyOn(store.records, 'getIdempotency') };
}
const stores: SqliteStore[] = [];
afterAll(() => Promise.all(stores.map((s) => s.close())));

const ACCEPTED: Answer = { status: 202, body: { ok: true, runId: 'r1', sessionKey: 'hook:1' } };

describe('IdempotencyGuard.once()', () => {
  it('runs the work of a new key and returns its answer', async () => {
    const guard = new IdempotencyGuard((await storeWith()).store.records);
    const work = vi.fn(async () => ACCEPTED);
    expect(await guard.once('agent\nk', 0, work)).toEqual(ACCEPTED);
    expect(work).toHaveBeenCalledOnce();
  });

  it('answers a stored key with the first answer marked duplicate, without running the work', async () => {
    const { store } = await storeWith({ key: 'agent\nk', status: 202, body: JSON.stringify(ACCEPTED.body), createdAt: 0, expiresAt: 100 });
    const guard = new IdempotencyGuard(store.records);
    const work = vi.fn(async () => ACCEPTED);
    expect(await guard.once('agent\nk', 50, work)).toEqual({ status: 202, body: { ...ACCEPTED.body, duplicate: true } });
    expect(work).not.toHaveBeenCalled();
    expect(await guard.once('agent\nk', 100, work)).toEqual(ACCEPTED); // expired: a new request
  });

  it('runs the work once for concurrent callers with one key; the others get the answer as a duplicate', async () => {
    const guard = new IdempotencyGuard((await storeWith()).store.records);
    const gate = Promise.withResolvers<Answer>();
    const work = vi.fn(() => gate.promise);
    const callers = [guard.once('k', 0, work), guard.once('k', 0, work), guard.once('k', 0, work)];
    await new Promise((r) => setImmediate(r));
    gate.resolve(ACCEPTED);
    const answers = await Promise.all(callers);
    expect(work).toHaveBeenCalledOnce();
    expect(answers.map((a) => a.body.duplicate ?? false)).toEqual([false, true, true]);
    expect(answers.every((a) => a.status === 202 && a.body.runId === 'r1')).toBe(true);
  });

  it('answers as a repeat when the store refuses the write because another instance stored the key first', async () => {
    const { store } = await storeWith();
    const guard = new IdempotencyGuard(store.records);
    // the other instance's record lands between this one's look-up and its write
    const work = vi.fn(async () => {
      await store.records.accept({
        events: [],
        runs: [],
        idempotency: { key: 'agent\nk', status: 202, body: JSON.stringify(ACCEPTED.body), createdAt: 0, expiresAt: 100 },
      });
      throw new IdempotencyTakenError('taken');
    });
    expect(await guard.once('agent\nk', 50, work)).toEqual({ status: 202, body: { ...ACCEPTED.body, duplicate: true } });
  });

  it('does not make different keys wait for each other', async () => {
    const guard = new IdempotencyGuard((await storeWith()).store.records);
    const gate = Promise.withResolvers<Answer>();
    const slow = guard.once('a', 0, () => gate.promise);
    expect(await guard.once('b', 0, async () => ACCEPTED)).toEqual(ACCEPTED);
    gate.resolve(ACCEPTED);
    await slow;
  });

  it('lets a waiting caller run fresh when the first one failed', async () => {
    const guard = new IdempotencyGuard((await storeWith()).store.records);
    const gate = Promise.withResolvers<Answer>();
    const first = guard.once('k', 0, () => gate.promise);
    const secondWork = vi.fn(async (): Promise<Answer> => ({ status: 200, body: { ok: true, mode: 'now', eventId: 'e2' } }));
    const second = guard.once('k', 0, secondWork);
    await new Promise((r) => setImmediate(r));
    const boom = Object.assign(new Error('invalid'), { status: 400 });
    gate.reject(boom);
    await expect(first).rejects.toBe(boom);
    expect(await second).toEqual({ status: 200, body: { ok: true, mode: 'now', eventId: 'e2' } });
    expect(secondWork).toHaveBeenCalledOnce();
  });

  it('releases the key when the store look-up fails', async () => {
    const { store, getIdempotency } = await storeWith();
    getIdempotency.mockRejectedValueOnce(new Error('disk I/O error'));
    const guard = new IdempotencyGuard(store.records);
    await expect(guard.once('k', 0, async () => ACCEPTED)).rejects.toThrow('disk I/O error');
    expect(await guard.once('k', 0, async () => ACCEPTED)).toEqual(ACCEPTED);
  });
});
