/**
 * A recipient (`to`) is checked by its channel when a request names both:
 * from `/hooks/agent`, a mapping's template, a transform and a plugin's
 * `ctx.dispatch` alike, a wrong one is a 400 naming the field `to` with the
 * channel's phrase, and nothing is stored.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinPlugins } from '../../plugins/index.ts';
import { definePlugin, type DispatchAnswer, type StartContext } from '../../src/plugins/define.ts';
import { createLogger } from '../../src/log.ts';
import { startService, type Service } from '../../src/service.ts';
import { cleanup, get, post, tempDir } from '../helpers/cli.ts';
import { testConfig } from '../helpers/runtime.ts';

const HOOK = 'hook-token-0123456789abcdef0123';
const GW = 'gateway-token-0123456789abcdef01';
const auth = { authorization: `Bearer ${HOOK}` };
const PHRASE = 'a chat number (123, -100…)';

const dispatched: (DispatchAnswer | string)[] = [];
const plugin = definePlugin({
  name: 'recipients-test',
  channels: {
    numbered: {
      create: () => ({
        limits: { requiresTo: true },
        checkTo: (to: string) => (/^-?\d+$/.test(to) ? undefined : PHRASE),
        send: async () => {},
      }),
    },
  },
  services: {
    relay: {
      create: () => ({
        async start(ctx: StartContext) {
          for (const to of ['@not-a-number', '42'])
            dispatched.push(
              await ctx
                .dispatch([{ kind: 'agent', message: 'from the relay', channel: 'tg', to, deliver: false }])
                .catch((e: Error) => e.message),
            );
        },
      }),
    },
  },
});

const dir = tempDir('hook-intake-recipients-');
const config = {
  gateway: { auth: { token: GW } },
  hooks: {
    enabled: true,
    token: HOOK,
    mappings: [
      { id: 'templated', match: { path: 'templated' }, messageTemplate: 'chat {{text}}', channel: 'tg', to: '{{chat}}', deliver: false },
      { id: 'transformed', match: { path: 'transformed' }, transform: { module: 'route.ts' } },
    ],
  },
  agents: { defaults: { heartbeat: { every: '0' } } },
  channels: { console: {}, tg: { type: 'numbered' } },
  services: { relay: {} },
};

describe('a recipient checked at intake', () => {
  let svc: Service;
  beforeAll(async () => {
    mkdirSync(join(dir, 'transforms'));
    writeFileSync(
      join(dir, 'transforms', 'route.ts'),
      `export default (ctx: { payload: { chat: string } }) => ({ message: 'transformed', channel: 'tg', to: ctx.payload.chat, deliver: false });`,
    );
    svc = await startService({
      load: () => testConfig(config, dir),
      logger: createLogger('silent'),
      port: 0,
      bind: '127.0.0.1',
      watch: false,
      builtins: [...builtinPlugins, plugin],
    });
  });
  afterAll(async () => {
    await svc?.stop();
    cleanup(dir);
  });

  const refusal = { ok: false, code: 'INVALID_PAYLOAD', field: 'to', error: `to: must be ${PHRASE} for channel "tg"` };

  it.each([
    ['/hooks/agent', { message: 'hi', channel: 'tg', to: '@not-a-number', deliver: false }],
    ['/hooks/templated', { text: 'hi', chat: '@not-a-number' }],
    ['/hooks/transformed', { chat: '@not-a-number' }],
  ])("%s: a wrong recipient is a 400 with the field and the channel's phrase, and nothing is stored", async (path, body) => {
    const r = await post(`${svc.url}${path}`, body, auth);
    expect(r.status).toBe(400);
    expect(r.body).toEqual(refusal);
    // other runs come and go meanwhile (the relay's, a heartbeat after it): none is for this recipient
    const runs = (await get(`${svc.url}/api/runs?limit=100`, GW)).body.runs as { to: string | null }[];
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.filter((x) => x.to === '@not-a-number')).toEqual([]);
  });

  it.each([
    ['/hooks/agent', { message: 'hi', channel: 'tg', to: '-100123', deliver: false }],
    ['/hooks/templated', { text: 'hi', chat: '-100123' }],
    ['/hooks/transformed', { chat: '-100123' }],
  ])('%s: a recipient of the right form is accepted', async (path, body) => {
    const r = await post(`${svc.url}${path}`, body, auth);
    expect(r.status).toBe(202);
    expect((await get(`${svc.url}/api/runs/${r.body.runId}`, GW)).body.run).toMatchObject({ channel: 'tg', to: '-100123' });
  });

  it("a plugin's dispatch is refused the same way, and takes a recipient of the right form", () => {
    expect(dispatched[0]).toBe(refusal.error);
    expect(dispatched[1]).toMatchObject({ status: 202, runIds: [expect.any(String)] });
  });
});
