/**
 * A 2xx answer means the work is on disk: what was answered survives SIGKILL.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { cleanup, get, post, startCli, tempDir, until } from '../helpers/cli.ts';
import { requestHead } from '../helpers/raw.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const config = {
  gateway: { auth: { token: GW } },
  hooks: { enabled: true, token: HOOK },
  agents: { defaults: { heartbeat: { every: '0' } } },
  session: { defaultRoute: { channel: 'console' } },
};
const auth = { authorization: `Bearer ${HOOK}` };

/**
 * A wake sent on a socket of its own with `Expect: 100-continue`: once the service answers 100 Continue
 * (it is reading the body, docs/http.md) half the body is sent and the rest never is. `reading` resolves
 * then; `ended` resolves with all the service sent once the connection closes.
 */
function heldWake(url: string, text: string): { reading: Promise<void>; ended: Promise<string> } {
  const body = JSON.stringify({ text, mode: 'next-heartbeat' });
  const u = new URL(url);
  const sock = connect(Number(u.port), u.hostname);
  let received = '';
  let reading!: () => void;
  const read = new Promise<void>((r) => (reading = r));
  sock.on('data', (d) => {
    received += d.toString('latin1');
    if (received.includes('100 Continue\r\n\r\n')) {
      sock.write(body.slice(0, 10));
      reading();
    }
  });
  sock.on('error', () => undefined);
  const ended = new Promise<string>((r) => sock.on('close', () => r(received)));
  const head = { ...auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' };
  sock.write(requestHead('POST', '/hooks/wake', head));
  return { reading: read, ended };
}

describe('durability across SIGKILL', () => {
  it('keeps a wake answered 200 after the server is killed and restarted on the same data dir', async () => {
    const dir = tempDir();
    try {
      const first = await startCli({ config, dir });
      const r = await post(`${first.url}/hooks/wake`, { text: 'remember me', mode: 'next-heartbeat' }, auth);
      expect(r.status).toBe(200);
      first.proc.kill('SIGKILL');
      await first.stop();

      const second = await startCli({ config, dir });
      try {
        const events = await get(`${second.url}/api/main/events`, GW);
        const ev = events.body.events.find((e: { id: string }) => e.id === r.body.eventId);
        expect(ev).toBeDefined();
        expect(ev.status).toBe('pending');
        expect(ev.text).toContain('remember me');
      } finally {
        await second.stop();
      }
    } finally {
      cleanup(dir);
    }
  });

  it('keeps every 2xx answer of a concurrent burst when killed mid-burst, and finishes the runs after restart', async () => {
    const dir = tempDir();
    try {
      const first = await startCli({ config, dir });
      const accepted: { kind: 'wake' | 'agent'; id: string }[] = [];
      // a few wakes the service is reading when the kill comes (it said 100 Continue; half the body is sent):
      // the kill lands mid-burst whatever the machine's speed
      const held = [0, 1, 2].map((n) => heldWake(first.url, `held ${n}`));
      const fire = async (i: number) => {
        const isAgent = i % 2 === 0;
        try {
          const r = isAgent
            ? await post(`${first.url}/hooks/agent`, { message: `job ${i}`, sessionKey: `hook:burst:${i % 7}`, deliver: false }, auth)
            : await post(`${first.url}/hooks/wake`, { text: `event ${i}`, mode: 'next-heartbeat' }, auth);
          if (r.status === 200 || r.status === 202)
            accepted.push(isAgent ? { kind: 'agent', id: r.body.runId } : { kind: 'wake', id: r.body.eventId });
        } catch {
          // connection cut by the kill: never answered, so nothing was promised
        }
      };
      const burst = Array.from({ length: 300 }, (_, i) => fire(i));
      await Promise.all(held.map((h) => h.reading));
      await until(() => accepted.length >= 100, undefined, 2);
      first.proc.kill('SIGKILL');
      await Promise.all(burst);
      await first.stop();
      // the held ones were in flight at the kill: cut, never answered beyond 100 Continue
      expect(await Promise.all(held.map((h) => h.ended))).toEqual(held.map(() => 'HTTP/1.1 100 Continue\r\n\r\n'));
      expect(accepted.length).toBeGreaterThanOrEqual(100);

      const second = await startCli({ config, dir });
      try {
        const events = (await get(`${second.url}/api/main/events?limit=10000`, GW)).body.events as { id: string }[];
        const eventIds = new Set(events.map((e) => e.id));
        const runIds = accepted.filter((a) => a.kind === 'agent').map((a) => a.id);
        for (const a of accepted.filter((x) => x.kind === 'wake')) expect(eventIds.has(a.id)).toBe(true);
        // a request cut before its body arrived promised nothing and stored nothing
        const texts = (await get(`${second.url}/api/main/events?limit=10000`, GW)).body.events.map((e: { text: string }) => e.text);
        expect(texts.filter((t: string) => t.includes('held '))).toEqual([]);
        const finals = await until(async () => {
          const runs = (await get(`${second.url}/api/runs?limit=10000`, GW)).body.runs as { id: string; status: string }[];
          const byId = new Map(runs.map((r) => [r.id, r.status]));
          const done = runIds.every((id) => ['ok', 'error', 'timeout'].includes(byId.get(id) ?? ''));
          return done ? byId : undefined;
        });
        for (const id of runIds) expect(finals.get(id)).toBe('ok');
      } finally {
        await second.stop();
      }
    } finally {
      cleanup(dir);
    }
  });
});
