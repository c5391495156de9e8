/**
 * Wake coalescing over real HTTP against the real CLI (docs/http.md, "Wake coalescing"): the same wake while it is the
 * newest pending event answers `coalesced` with its id and stores nothing, a mapped wake coalesces only with its own
 * mapping's, a repeat of an idempotency key gets the coalesced answer, and a coalesced `now` wake still brings a heartbeat.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cleanup, get, post, startCli, until, type Running } from '../helpers/cli.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const auth = { authorization: `Bearer ${HOOK}` };

let srv: Running;
beforeAll(async () => {
  srv = await startCli({
    config: {
      gateway: { auth: { token: GW } },
      hooks: {
        enabled: true,
        token: HOOK,
        mappings: [{ id: 'alerts', match: { path: 'alerts' }, action: 'wake', textTemplate: '{{text}}', wakeMode: 'next-heartbeat' }],
      },
      agents: { defaults: { heartbeat: { every: '0' } }, providers: { echo: { type: 'echo' } } },
      channels: { console: {} },
      session: { defaultRoute: { channel: 'console' } },
    },
  });
});
afterAll(async () => {
  expect(await srv.stop()).toBe(0);
  cleanup(srv.dir);
});

const wake = (text: string, mode = 'next-heartbeat', headers: Record<string, string> = {}) =>
  post(`${srv.url}/hooks/wake`, { text, mode }, { ...auth, ...headers });
const pending = async () =>
  (await get(`${srv.url}/api/main/events?status=pending&limit=100`, GW)).body.events.map((e: { id: string }) => e.id);

it('coalesces the same wake while it is the newest pending event, per source, and keeps that answer for a repeated key', async () => {
  const first = await wake('  disk almost full ');
  expect(first).toMatchObject({ status: 200, body: { ok: true, eventOutcome: 'queued' } });
  const same = await wake('disk almost full', 'next-heartbeat', { 'idempotency-key': 'k-1' });
  expect(same).toMatchObject({ status: 200, body: { ok: true, eventId: first.body.eventId, eventOutcome: 'coalesced' } });
  const repeat = await wake('disk almost full', 'next-heartbeat', { 'idempotency-key': 'k-1' });
  expect(repeat.body).toEqual({ ...same.body, duplicate: true });

  // the mapping's wake with the same text is another source
  const mapped = await post(`${srv.url}/hooks/alerts`, { text: 'disk almost full' }, auth);
  expect(mapped).toMatchObject({ status: 200, body: { eventOutcome: 'queued' } });
  expect((await post(`${srv.url}/hooks/alerts`, { text: 'disk almost full' }, auth)).body).toMatchObject({
    eventId: mapped.body.eventId,
    eventOutcome: 'coalesced',
  });
  // the direct wake is no longer the newest pending event
  const behind = await wake('disk almost full');
  expect(behind.body.eventOutcome).toBe('queued');
  expect(await pending()).toEqual([behind.body.eventId, mapped.body.eventId, first.body.eventId]);
});

it('asks for a heartbeat for a coalesced now wake, and queues the wake again once the heartbeat consumed it', async () => {
  const queued = await wake('build failed');
  const now = await wake('build failed', 'now');
  expect(now.body).toMatchObject({ eventId: queued.body.eventId, eventOutcome: 'coalesced', mode: 'now' });
  await until(async () => (await pending()).length === 0, 15_000);
  expect((await wake('build failed')).body.eventOutcome).toBe('queued');
});
