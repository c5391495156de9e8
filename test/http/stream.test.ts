/**
 * `GET /api/stream`, the console's server-sent events: the figures at once and
 * on each change (not when unchanged), a console session's stream ending with
 * `signed-out` when its session ends, and every stream ending when the service
 * stops (so shutdown does not wait for them).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/http/app.ts';
import { FailureThrottle } from '../../src/auth/throttle.ts';
import { ConsoleSessions, SESSION_COOKIE } from '../../src/auth/sessions.ts';
import { ConsoleFeed } from '../../src/http/stream.ts';
import { GenerationRef } from '../../src/generation/ref.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { createLogger } from '../../src/log.ts';
import { GATEWAY_TOKEN, testGeneration } from '../helpers/generation.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';

const dir = tempDir('hook-intake-stream-');
const store = new SqliteStore({ path: join(dir, 'hook-intake.db') });
const generations = new GenerationRef(await testGeneration({ gateway: { auth: { token: GATEWAY_TOKEN } } }));
const sessions = new ConsoleSessions();
let figures = { n: 0 };
const feed = new ConsoleFeed({ snapshot: async () => figures, sessions, clock: () => 1_000, everyMs: 20 });

let server: Server;
let base = '';
beforeAll(async () => {
  const app = createApp({
    generations,
    store,
    throttle: new FailureThrottle({ max: 10, windowMs: 60_000 }),
    sessions,
    feed,
    clock: () => 1_000,
    ready: () => true,
    status: () => ({}),
    logger: createLogger('silent'),
  });
  server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  feed.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await store.close();
  cleanup(dir);
});

/** Opens the stream; `next(pattern)` reads until the text received matches, `ended` resolves when it closes. */
async function open(headers: Record<string, string>) {
  const res = await fetch(`${base}/api/stream`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let done = false;
  const read = async () => {
    const r = await reader.read();
    if (r.done) done = true;
    else text += decoder.decode(r.value, { stream: true });
  };
  return {
    async next(pattern: RegExp): Promise<string> {
      while (!pattern.test(text)) {
        if (done) throw new Error(`stream ended before ${pattern}; got:\n${text}`);
        await read();
      }
      return text;
    },
    async ended(): Promise<string> {
      while (!done) await read();
      return text;
    },
  };
}

describe('GET /api/stream', () => {
  it('sends the figures at once and when they change, not while they stay the same', async () => {
    figures = { n: 0 };
    const s = await open({ authorization: `Bearer ${GATEWAY_TOKEN}` });
    await s.next(/event: stats\ndata: \{"n":0\}\n\n/);
    // looks that find the same figures send nothing (a duplicate would arrive before the change)
    await feed.tick();
    await feed.tick();
    figures = { n: 1 };
    const text = await s.next(/data: \{"n":1\}/);
    // unchanged figures are not sent again
    expect(text.match(/"n":0/g)).toHaveLength(1);
  });

  it("ends a console session's stream with signed-out when the session ends", async () => {
    const session = await sessions.create(1_000, 'fingerprint');
    const s = await open({ cookie: `${SESSION_COOKIE}=${session.id}` });
    await s.next(/event: stats/);
    await sessions.end(session.id);
    expect(await s.ended()).toMatch(/event: signed-out\ndata: \{\}\n\n$/);
  });

  it('ends every stream when the service stops, and takes no new one', async () => {
    const s = await open({ authorization: `Bearer ${GATEWAY_TOKEN}` });
    await s.next(/event: stats/);
    feed.close();
    await s.ended();
    expect(feed.size()).toBe(0);
    expect((await fetch(`${base}/api/stream`, { headers: { authorization: `Bearer ${GATEWAY_TOKEN}` } })).status).toBe(503);
  });

  it('needs the gateway token or a session', async () => {
    expect((await fetch(`${base}/api/stream`)).status).toBe(401);
  });
});
