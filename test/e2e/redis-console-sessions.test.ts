/**
 * The console behind a balancer (docs/console.md, "Signing in"): two instances on one redis-server. A browser signed
 * in on one is signed in on the other, a sign-out on either ends the session on both, and what Redis
 * holds of a session cannot be used as its cookie.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/auth/sessions.ts';
import { startService, type Service } from '../../src/service.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';
import { redisSuite, startRedis, type RedisServer } from '../helpers/redis-server.ts';
import { captureLogger, testConfig } from '../helpers/runtime.ts';

const GW = 'gw_redis-sessions-test-token-0123456789';

redisSuite('console sessions shared by instances on Redis', () => {
  let redis: RedisServer;
  const services: Service[] = [];
  const dirs = [tempDir('hook-intake-sessions-a-'), tempDir('hook-intake-sessions-b-')];

  beforeAll(async () => {
    redis = await startRedis();
    for (const dir of dirs) {
      const raw = {
        storage: { driver: 'redis', url: redis.url },
        gateway: { auth: { token: GW } },
        agents: { defaults: { heartbeat: { every: '0' } } },
      };
      services.push(
        await startService({
          load: () => testConfig(raw, dir),
          logger: captureLogger('warn').logger,
          port: 0,
          bind: '127.0.0.1',
          watch: false,
        }),
      );
    }
  });
  afterAll(async () => {
    for (const s of services) await s.stop();
    await redis?.stop();
    for (const d of dirs) cleanup(d);
  });

  const call = async (svc: Service, method: string, path: string, headers: Record<string, string>) => {
    const res = await fetch(`${svc.url}${path}`, { method, headers });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, setCookie: res.headers.get('set-cookie') };
  };

  it('a session made on one instance works on the other, and a sign-out on either ends it on both', async () => {
    const [a, b] = services as [Service, Service];
    const signIn = await call(a, 'POST', '/ui/session', { authorization: `Bearer ${GW}` });
    expect(signIn.status).toBe(200);
    const id = /hook_intake_session=([^;]+)/.exec(signIn.setCookie ?? '')![1]!;
    const cookie = `${SESSION_COOKIE}=${id}`;

    expect((await call(b, 'GET', '/api/requests', { cookie })).status).toBe(200);
    expect(await call(b, 'GET', '/ui/session', { cookie })).toMatchObject({ status: 200, body: { csrfToken: signIn.body.csrfToken } });

    // what Redis holds of it is not the cookie
    const keys = await redis.client.keys('*console:*');
    expect(keys).toHaveLength(1);
    const stored = `${keys.join()} ${await redis.client.get(keys[0]!)}`;
    expect(stored).not.toContain(id);
    expect(await redis.client.pttl(keys[0]!)).toBeGreaterThan(0);

    const out = await call(b, 'DELETE', '/ui/session', { cookie, 'x-csrf-token': signIn.body.csrfToken, origin: b.url });
    expect(out.status).toBe(204);
    expect((await call(a, 'GET', '/api/requests', { cookie })).status).toBe(401);
    expect((await call(b, 'GET', '/api/requests', { cookie })).status).toBe(401);
    expect(await redis.client.keys('*console:*')).toEqual([]);
  });
});
