/**
 * Callbacks with several `hook-intake serve` instances on one redis-server (docs/callbacks.md,
 * "Delivery"; docs/redis.md): an event belongs to the instance that stored it, and another sends it when
 * that one is gone, under the same `webhook-id`; a run accepted by one instance and finished by another
 * has its event stored, and sent, by the one that finished it. Each instance posts to a path of its own
 * on the receiver, which verifies every event with the standardwebhooks library.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisStore } from '../../src/store/redis/store.ts';
import { callbackSecret, startCallbackReceiver } from '../helpers/callback-receiver.ts';
import { cleanup, post, startCli, tempDir, until, type Running } from '../helpers/cli.ts';
import { completion, json, startStub, type HttpStub, type Recorded } from '../helpers/http-stub.ts';
import type { ProviderStub } from '../helpers/provider-stub.ts';
import { redisSuite, startRedis, type RedisServer } from '../helpers/redis-server.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const auth = { authorization: `Bearer ${HOOK}` };
const secret = callbackSecret(5);

redisSuite('callbacks with several instances on one Redis', () => {
  let redis: RedisServer;
  let llm: HttpStub;
  let receiver: ProviderStub;
  let store: RedisStore;
  const dirs: string[] = [];
  const running: Running[] = [];
  /** The instance that outlives the others. */
  let b: Running;
  /** Model calls of instances named here are held until their instance is killed. */
  const holdModel = new Set<string>();
  const held: Recorded[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    store = await RedisStore.open({ url: redis.url });
    llm = await startStub(async (req, res) => {
      const instance = req.url.split('/')[1]!;
      if (holdModel.has(instance)) {
        held.push(req);
        return req.aborted;
      }
      json(res, 200, completion('done'));
    });
    // the first instance's events are never answered: it is killed while it sends one
    receiver = await startCallbackReceiver(secret, (req) => (req.path.startsWith('/a/') ? { hang: true } : { status: 204 }));
  });
  afterAll(async () => {
    // the instances still running when a test failed
    for (const r of running) if (r.proc.exitCode === null) await r.stop('SIGKILL').catch(() => undefined);
    await store?.close();
    await llm?.close();
    await receiver?.close();
    await redis?.stop();
    for (const d of dirs) cleanup(d);
  });

  /** An instance named `name`: its model calls and its callback's events go to paths of its own. */
  const start = async (name: string): Promise<Running> => {
    const srv = await startCli({
      dir: (dirs[dirs.length] = tempDir()),
      startTimeoutMs: 60_000,
      config: {
        hooks: { enabled: true, token: HOOK },
        agents: {
          defaults: { model: 'llm/stand-in', heartbeat: { every: '0' } },
          providers: { llm: { type: 'openai', baseUrl: `${llm.url}/${name}/v1`, models: { 'stand-in': 'local-model' } } },
        },
        callbacks: [{ id: 'ci', url: `${receiver.url}/${name}/events`, secret, types: ['run.completed'], allowPrivateNetwork: true }],
        storage: { driver: 'redis', url: redis.url, instanceTimeoutSeconds: 1 },
        logging: { level: 'warn' },
      },
    });
    running.push(srv);
    return srv;
  };
  const agent = async (srv: Running, message: string): Promise<string> => {
    const r = await post(`${srv.url}/hooks/agent`, { message, deliver: false }, auth);
    expect(r.status).toBe(202);
    return r.body.runId;
  };
  const eventsOf = (runId: string) => receiver.requests.filter((r) => r.body?.data?.runId === runId);

  it('sends an event from another instance when the one that stored it is gone, under the same webhook-id', async () => {
    const a = await start('a');
    const runId = await agent(a, 'first');
    // a finished the run and is sending its event, which the receiver holds
    const [first] = await until(() => (eventsOf(runId).length ? eventsOf(runId) : undefined));
    expect(first!.path).toBe('/a/events');
    // b starts while a lives: a's event is not b's to send
    b = await start('b');
    a.proc.kill('SIGKILL');
    await a.stop();
    const again = await until(() => eventsOf(runId).find((r) => r.path === '/b/events'));
    expect(again.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(again.raw.toString()).toBe(first!.raw.toString());
    await until(async () => (await store.records.runCallbacks(runId))[0]?.status === 'sent');
    expect(eventsOf(runId)).toHaveLength(2);
    receiver.expectClean();
  }, 90_000);

  it("stores a run's event on the instance that finishes it, not the one that took the request", async () => {
    holdModel.add('c');
    const c = await start('c');
    const runId = await agent(c, 'second');
    // whichever claims it, c never answers: c's model calls are held; b's are not
    await until(async () => held.length > 0 || (await store.records.getRun(runId))?.status === 'ok');
    c.proc.kill('SIGKILL');
    await c.stop();
    const got = await until(() => eventsOf(runId)[0]);
    expect(got.path).toBe('/b/events');
    expect(got.body).toMatchObject({ type: 'run.completed', data: { runId, hook: 'agent', status: 'ok' } });
    const [entry] = await until(async () => {
      const list = await store.records.runCallbacks(runId);
      return list[0]?.status === 'sent' ? list : undefined;
    });
    expect(entry!.id).toBe(got.headers['webhook-id']);
    expect(eventsOf(runId)).toHaveLength(1);
    receiver.expectClean();
    await b.stop();
  }, 90_000);
});
