/**
 * The admin API and retention (docs/http.md, "Kept requests" and "Admin actions"; docs/configuration.md,
 * "Retention") on a service whose storage is Redis: a kept request listed, shown and replayed, a run
 * retried, a failed reply redelivered, and a retention pass that then removes all of it once it is
 * older than `retention.*Days` (the service's clock moved on). No credential the request carried is
 * anywhere on the Redis server.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { builtinPlugins } from '../../plugins/index.ts';
import { ChannelError, definePlugin } from '../../src/plugins/define.ts';
import { startService, type Service } from '../../src/service.ts';
import { cleanup, tempDir, until } from '../helpers/cli.ts';
import { redisSuite, startRedis, type RedisServer } from '../helpers/redis-server.ts';
import { captureLogger, testConfig } from '../helpers/runtime.ts';

const HOOK = 'hk_redis-console-test-token-0123456789';
const GW = 'gw_redis-console-test-token-0123456789';
const COOKIE = 'ck_redis-console-test-cookie-0123456789';
const CUSTOM = 'ct_redis-console-test-custom-0123456789';
const DAY = 86_400_000;

/** A channel that refuses for good while `failing` is set. */
let failing = false;
const sent: string[] = [];
const flaky = definePlugin({
  name: 'flaky-test',
  channels: {
    flaky: {
      create: () => ({
        async send(msg: { text: string }) {
          if (failing) throw new ChannelError('refused', { retryable: false });
          sent.push(msg.text);
        },
      }),
    },
  },
});

redisSuite('admin API and retention on Redis', () => {
  let redis: RedisServer;
  let svc: Service;
  const dir = tempDir('hook-intake-redis-console-');
  /** Added to the service's clock: retention then finds everything old. */
  let shift = 0;

  beforeAll(async () => {
    redis = await startRedis();
    const raw = {
      storage: { driver: 'redis', url: redis.url },
      gateway: { auth: { token: GW } },
      hooks: { enabled: true, token: HOOK },
      agents: { defaults: { heartbeat: { every: '0' } } },
      channels: { flaky: {} },
      session: { defaultRoute: { channel: 'flaky' } },
      retention: { runsDays: 30, eventsDays: 30, requestsDays: 7 },
    };
    svc = await startService({
      load: () => testConfig(raw, dir),
      logger: captureLogger('warn').logger,
      port: 0,
      bind: '127.0.0.1',
      watch: false,
      builtins: [...builtinPlugins, flaky],
      clock: () => Date.now() + shift,
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await redis?.stop();
    cleanup(dir);
  });

  const call = async (method: string, path: string, body?: unknown, token = GW, headers: Record<string, string> = {}) => {
    const res = await fetch(`${svc.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const runOf = (id: string) => svc.store.records.getRun(id);
  /** Every member, field and value of every key on the server, as text. */
  const everything = async () => {
    const c = redis.client;
    const parts: string[] = [];
    for (const key of await c.keys('*')) {
      const type = await c.type(key);
      if (type === 'string') parts.push((await c.getBuffer(key))!.toString('latin1'));
      else if (type === 'hash') parts.push(...Object.entries(await c.hgetallBuffer(key)).map(([f, v]) => `${f}=${v.toString('latin1')}`));
      else if (type === 'list') parts.push(...(await c.lrangeBuffer(key, 0, -1)).map((v) => v.toString('latin1')));
      else if (type === 'zset') parts.push(...(await c.zrange(key, '0', '-1')));
      parts.push(key);
    }
    return parts.join('\n');
  };
  const finished = (id: string) => until(async () => ((await runOf(id))?.finishedAt ? runOf(id) : undefined));

  it('lists, shows and replays a kept request, retries its run and redelivers a failed reply; retention then removes them', async () => {
    failing = true;
    // next-heartbeat: the runs' summaries wait for a heartbeat that never comes (none runs meanwhile), so the counts below are exact
    const r = await call('POST', '/hooks/agent?x=1', { message: 'deliver me', wakeMode: 'next-heartbeat' }, HOOK, {
      cookie: `sid=${COOKIE}`,
      'x-custom-token': CUSTOM,
    });
    expect(r.status).toBe(202);
    await until(async () => (await runOf(r.body.runId))?.delivery.status === 'failed');
    failing = false;

    const [kept] = (await call('GET', '/api/requests?hook=agent&status=202')).body.requests;
    expect(kept).toMatchObject({ hook: 'agent', status: 202, url: '/hooks/agent?x=1', runIds: [r.body.runId], replayOf: null });
    expect((await call('GET', `/api/requests/${kept.id}`)).body.request).toMatchObject({
      body: '{"message":"deliver me","wakeMode":"next-heartbeat"}',
      bodyEncoding: 'utf8',
    });

    const replay = await call('POST', `/api/requests/${kept.id}/replay`);
    expect(replay.status).toBe(202);
    expect(replay.body).toMatchObject({ ok: true, replayOf: kept.id });
    await finished(replay.body.runId);

    const retry = await call('POST', `/api/runs/${r.body.runId}/retry`);
    expect(retry.status).toBe(202);
    expect(await finished(retry.body.runId)).toMatchObject({ status: 'ok', message: (await runOf(r.body.runId))!.message });

    expect((await call('POST', `/api/runs/${r.body.runId}/redeliver`)).status).toBe(202);
    await until(async () => (await runOf(r.body.runId))?.delivery.status === 'sent');
    expect(sent.some((t) => t.includes('deliver me'))).toBe(true);
    for (const id of [replay.body.runId, retry.body.runId]) await until(async () => (await runOf(id))?.delivery.status === 'sent');

    expect((await call('GET', '/api/requests')).body.requests.map((q: { replayOf: string | null }) => q.replayOf)).toEqual([kept.id, null]);
    // the request's credentials were kept nowhere on the server
    const stored = await everything();
    expect(stored).toContain('deliver me');
    for (const secret of [HOOK, GW, COOKIE, CUSTOM]) expect(stored).not.toContain(secret);
    shift = 31 * DAY;
    const pruned = await svc.retention.runOnce();
    // three runs, each with its transcript (two lines) and its delivery (the first run has two), and both requests;
    // the summary events are pending, so they stay
    expect(pruned).toEqual({ runs: 3, events: 0, messages: 6, deliveries: 4, requests: 2 });
    expect((await call('GET', '/api/requests')).body.requests).toEqual([]);
    for (const id of [r.body.runId, replay.body.runId, retry.body.runId]) expect(await runOf(id)).toBeUndefined();
    expect(
      await svc.store.records.countPrunable({
        runs: Date.now() + shift,
        events: Date.now() + shift,
        requests: Date.now() + shift,
        sessionLines: 50,
      }),
    ).toEqual({ runs: 0, events: 0, messages: 0, deliveries: 0, requests: 0 });
  });
});
