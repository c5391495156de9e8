/**
 * Where a reply goes (docs/configuration.md, "The main route"): `last` is the
 * route of the last successful delivery of the main session, else
 * session.defaultRoute, else the channel whose id is whatsapp when configured.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mainRoute, resolveRoute } from '../../src/runtime/routes.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { MetaRecords } from '../../src/store/roles.ts';
import { testGeneration } from '../helpers/generation.ts';

/** A store (SQLite in memory) that remembers `route` as the main route, when given (a string as stored). */
/** The records of a store that remembers `route` as the main route (none when absent). */
async function remembered(route?: unknown): Promise<MetaRecords> {
  const store = new SqliteStore({ path: ':memory:' });
  stores.push(store);
  if (route !== undefined) await store.records.setMeta('mainRoute', typeof route === 'string' ? route : JSON.stringify(route));
  return store.records;
}
const stores: SqliteStore[] = [];
afterAll(() => Promise.all(stores.map((s) => s.close())));

const two = { console: {}, chat: { type: 'needs-to' } };
const gen = await testGeneration({
  channels: { ...two, other: { type: 'recording' } },
  session: { defaultRoute: { channel: 'chat', to: 'default-chat' } },
});

describe('mainRoute()', () => {
  it.each([
    [
      'the remembered route first',
      { channels: two, session: { defaultRoute: { channel: 'console' } } },
      { channel: 'chat', to: '42' },
      { channel: 'chat', to: '42' },
    ],
    [
      'session.defaultRoute before any delivery',
      { channels: two, session: { defaultRoute: { channel: 'chat', to: '7' } } },
      undefined,
      { channel: 'chat', to: '7' },
    ],
    [
      'defaultRoute without to',
      { channels: two, session: { defaultRoute: { channel: 'console' } } },
      undefined,
      { channel: 'console', to: null },
    ],
    [
      'whatsapp when configured and nothing else is known',
      { channels: { ...two, whatsapp: { type: 'recording' } } },
      undefined,
      { channel: 'whatsapp', to: null },
    ],
    ['nothing with one channel and no hint (only the three rules apply)', { channels: { console: {} } }, undefined, undefined],
    [
      'the remembered route before whatsapp',
      { channels: { ...two, whatsapp: { type: 'recording' } } },
      { channel: 'chat', to: '42' },
      { channel: 'chat', to: '42' },
    ],
    [
      'session.defaultRoute before whatsapp',
      { channels: { ...two, whatsapp: { type: 'recording' } }, session: { defaultRoute: { channel: 'chat', to: '7' } } },
      undefined,
      { channel: 'chat', to: '7' },
    ],
    ['nothing with several channels and no hint', { channels: two }, undefined, undefined],
    [
      'the defaults when the remembered channel is gone',
      { channels: two, session: { defaultRoute: { channel: 'console' } } },
      { channel: 'telegram', to: '1' },
      { channel: 'console', to: null },
    ],
    [
      'the defaults when the remembered value is damaged',
      { channels: two, session: { defaultRoute: { channel: 'console' } } },
      '{not json',
      { channel: 'console', to: null },
    ],
  ])('uses %s', async (_what, config, stored, expected) => {
    expect(await mainRoute(await testGeneration(config), await remembered(stored))).toEqual(expected);
  });
});

describe('resolveRoute()', () => {
  describe('channel "last"', () => {
    it('follows the main route, with its recipient unless one is given', async () => {
      const store = await remembered({ channel: 'chat', to: '42' });
      expect(await resolveRoute(gen, store, 'last', null)).toEqual({ route: { channel: 'chat', to: '42' } });
      expect(await resolveRoute(gen, store, 'last', '99')).toEqual({ route: { channel: 'chat', to: '99' } });
    });

    it('is skipped with a reason when no main route is known', async () => {
      const bare = await testGeneration({ channels: two });
      expect(await resolveRoute(bare, await remembered(), 'last', null)).toEqual({
        skip: 'no main route is known yet (set session.defaultRoute)',
      });
    });
  });

  describe('a named channel', () => {
    it('takes the given recipient', async () => {
      expect(await resolveRoute(gen, await remembered({ channel: 'chat', to: '42' }), 'chat', '5')).toEqual({
        route: { channel: 'chat', to: '5' },
      });
    });

    it('borrows the recipient of the main route when it is the same channel', async () => {
      expect(await resolveRoute(gen, await remembered({ channel: 'chat', to: '42' }), 'chat', null)).toEqual({
        route: { channel: 'chat', to: '42' },
      });
    });

    it('falls back to the recipient of session.defaultRoute for that channel', async () => {
      expect(await resolveRoute(gen, await remembered({ channel: 'console', to: null }), 'chat', null)).toEqual({
        route: { channel: 'chat', to: 'default-chat' },
      });
    });

    it('has no recipient on a channel nothing names', async () => {
      expect(await resolveRoute(gen, await remembered({ channel: 'chat', to: '42' }), 'other', null)).toEqual({
        route: { channel: 'other', to: null },
      });
    });

    it('is skipped when the channel is not configured (any more)', async () => {
      expect(await resolveRoute(gen, await remembered(), 'telegram', '1')).toEqual({
        skip: 'channel "telegram" is not configured',
        route: { channel: 'telegram', to: '1' },
      });
    });
  });

  it('is skipped when the recipient does not fit the channel (one from "last" or session.defaultRoute, not checked at intake)', async () => {
    const numbered = await testGeneration({
      channels: { console: {}, tg: { type: 'numbered' } },
      session: { defaultRoute: { channel: 'tg', to: '@ops' } },
    });
    const skip = 'the recipient does not fit channel "tg": it must be a chat number (123, -100…)';
    expect(await resolveRoute(numbered, await remembered(), 'last', null)).toEqual({ skip, route: { channel: 'tg', to: '@ops' } });
    expect(await resolveRoute(numbered, await remembered(), 'tg', null)).toEqual({ skip, route: { channel: 'tg', to: '@ops' } });
    expect(await resolveRoute(numbered, await remembered(), 'last', '-100')).toEqual({ route: { channel: 'tg', to: '-100' } });
  });

  it('is skipped when the channel requires a recipient and none is known', async () => {
    const noDefault = await testGeneration({ channels: two, session: { defaultRoute: { channel: 'console' } } });
    expect(await resolveRoute(noDefault, await remembered(), 'chat', null)).toEqual({
      skip: 'no recipient for channel "chat" (set "to")',
      route: { channel: 'chat', to: null },
    });
    expect(await resolveRoute(noDefault, await remembered({ channel: 'chat', to: null }), 'last', null)).toMatchObject({
      skip: 'no recipient for channel "chat" (set "to")',
    });
  });
});
