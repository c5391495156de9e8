/**
 * SIGTERM (docs/runtime.md, "Shutdown"): intake stops at once, a running run may finish within
 * `gateway.shutdownTimeoutSeconds`, runs not started stay queued on disk and
 * run on the next start, and the process exits 0.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, get, post, startCli, tempDir, until } from '../helpers/cli.ts';
import { completion, json, startStub, type HttpStub } from '../helpers/http-stub.ts';
import { parseResponse, requestHead, type RawResponse } from '../helpers/raw.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const auth = { authorization: `Bearer ${HOOK}` };

/** Run rows straight from the database file of a stopped service. */
function runsOnDisk(dataDir: string): Map<string, { status: string; attempts: number }> {
  const db = new DatabaseSync(join(dataDir, 'hook-intake.db'), { readOnly: true });
  try {
    const rows = db.prepare("SELECT id, status, attempts FROM runs WHERE kind = 'hook'").all() as {
      id: string;
      status: string;
      attempts: number;
    }[];
    return new Map(rows.map((r) => [r.id, { status: r.status, attempts: Number(r.attempts) }]));
  } finally {
    db.close();
  }
}

function eventsOnDisk(dataDir: string): { id: string; text: string }[] {
  const db = new DatabaseSync(join(dataDir, 'hook-intake.db'), { readOnly: true });
  try {
    return db.prepare('SELECT id, text FROM events').all() as { id: string; text: string }[];
  } finally {
    db.close();
  }
}

/** One answer (or failure) seen by the hammering client, with when its request was started. */
interface Seen {
  startedAt: number;
  status?: number;
  connection?: string;
  code?: string;
  eventId?: string;
  error?: string;
}

/** A wake sent on `agent` (kept-alive sockets), resolved with what came back. */
function wake(url: string, agent: Agent, text: string): Promise<Seen> {
  const startedAt = performance.now();
  const body = JSON.stringify({ text, mode: 'next-heartbeat' });
  return new Promise((resolve) => {
    const req = request(
      `${url}/hooks/wake`,
      { method: 'POST', agent, headers: { ...auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const parsed = text ? JSON.parse(text) : {};
          resolve({ startedAt, status: res.statusCode!, connection: res.headers.connection, code: parsed.code, eventId: parsed.eventId });
        });
        res.on('error', (err) => resolve({ startedAt, error: (err as NodeJS.ErrnoException).code ?? err.message }));
      },
    );
    req.on('error', (err) => resolve({ startedAt, error: (err as NodeJS.ErrnoException).code ?? err.message }));
    req.end(body);
  });
}

/** Every response in `text`, in order (pipelined answers on one connection). */
function responses(text: string): RawResponse[] {
  const out: RawResponse[] = [];
  for (;;) {
    const r = parseResponse(text);
    if (!r) return out;
    // the bodies here are ASCII: characters are bytes
    const len = Number(r.headers['content-length'] ?? 0);
    out.push({ ...r, body: r.body.slice(0, len) });
    text = text.slice(text.indexOf('\r\n\r\n') + 4 + len);
  }
}

/** Whether a new connection to `url` is refused (the listener is closed). */
function refused(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const s = connect(Number(u.port), u.hostname);
    s.on('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

describe('SIGTERM with the real CLI', () => {
  let llm: HttpStub;
  /** What the stand-in model waits for before answering: nothing, a promise the test settles, or forever. */
  let answerAfter: Promise<void> | 'never' | undefined;
  /** Model calls answered so far. */
  let answered = 0;

  beforeAll(async () => {
    llm = await startStub(async (req, res) => {
      if (answerAfter === 'never') return;
      await answerAfter;
      json(res, 200, completion(`answer ${req.json.messages.length}`));
      answered++;
    });
  });
  afterAll(() => llm.close());

  const config = (shutdownTimeoutSeconds: number) => ({
    gateway: { auth: { token: GW }, shutdownTimeoutSeconds },
    hooks: { enabled: true, token: HOOK },
    agents: {
      defaults: { model: 'llm/m', maxConcurrent: 1, heartbeat: { every: '0' } },
      providers: { llm: { type: 'openai', baseUrl: llm.url } },
    },
    channels: { console: {} },
    logging: { level: 'warn' },
  });

  it('lets the running run finish, keeps the queued ones for the next start, refuses new requests, and exits 0', async () => {
    llm.requests.length = 0;
    answered = 0;
    // the first run is going until the test lets the model answer
    let letAnswer!: () => void;
    answerAfter = new Promise<void>((r) => (letAnswer = r));
    const dir = tempDir();
    try {
      const first = await startCli({ config: config(10), dir });
      const ids: string[] = [];
      for (const m of ['running one', 'queued two', 'queued three']) {
        const r = await post(
          `${first.url}/hooks/agent`,
          { message: m, sessionKey: `hook:${m.replace(' ', '-')}`, wakeMode: 'next-heartbeat', deliver: false },
          auth,
        );
        expect(r.status).toBe(202);
        ids.push(r.body.runId);
      }
      await until(() => llm.requests.length === 1); // maxConcurrent 1: only the first has started
      const exited = first.stop('SIGTERM');
      // intake stops as soon as the signal is handled, while the run is still going;
      // a request that got in before that was answered, and is kept like any other
      const lateIds: string[] = [];
      let refusedWhileRunning = false;
      await until(async () => {
        try {
          const late = await post(`${first.url}/hooks/wake`, { text: 'too late', mode: 'next-heartbeat' }, auth);
          if (late.status === 200) lateIds.push(late.body.eventId);
          return false;
        } catch {
          refusedWhileRunning = answered === 0;
          return true;
        }
      });
      expect(refusedWhileRunning).toBe(true);
      letAnswer();
      expect(await exited).toBe(0);

      const disk = runsOnDisk(first.dataDir);
      expect(disk.get(ids[0]!)).toEqual({ status: 'ok', attempts: 1 });
      expect(disk.get(ids[1]!)).toEqual({ status: 'queued', attempts: 0 });
      expect(disk.get(ids[2]!)).toEqual({ status: 'queued', attempts: 0 });
      expect(llm.requests).toHaveLength(1);
      expect(
        eventsOnDisk(first.dataDir)
          .filter((e) => e.text.includes('too late'))
          .map((e) => e.id)
          .sort(),
      ).toEqual(lateIds.sort());

      answerAfter = undefined;
      const second = await startCli({ config: config(10), dir });
      try {
        for (const id of ids.slice(1)) {
          const run = await until(async () => {
            const r = (await get(`${second.url}/api/runs/${id}`, GW)).body.run;
            return r.status === 'ok' ? r : undefined;
          });
          expect(run).toMatchObject({ status: 'ok', attempts: 1 });
        }
        expect(llm.requests).toHaveLength(3);
      } finally {
        expect(await second.stop()).toBe(0);
      }
    } finally {
      cleanup(dir);
    }
  });

  it('answers a request in flight at the signal with Connection: close, and takes no new request on its connection', async () => {
    const dir = tempDir();
    // a drain deadline of an hour: a stop that waited for it would run into the test's timeout
    const running = await startCli({ config: config(3600), dir });
    let exited = false;
    try {
      const u = new URL(running.url);
      const sock = connect(Number(u.port), u.hostname);
      let received = '';
      sock.on('data', (d) => (received += d.toString('utf8')));
      const ended = new Promise<void>((r) => sock.on('close', () => r()));
      const wakeRequest = (text: string, extra: Record<string, string> = {}) => {
        const body = JSON.stringify({ text, mode: 'next-heartbeat' });
        return {
          head: requestHead('POST', '/hooks/wake', {
            ...auth,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            ...extra,
          }),
          body,
        };
      };
      // one answer on the connection: it is kept alive
      const first = wakeRequest('before the signal');
      sock.write(first.head + first.body);
      await until(() => responses(received).length === 1);
      expect(responses(received)[0]).toMatchObject({ status: 200, headers: { connection: 'keep-alive' } });

      // the second request is in flight when the signal comes: the service has taken it and is reading its
      // body (it says so with 100 Continue, docs/http.md), of which a part has been sent
      const second = wakeRequest('in flight at the signal', { expect: '100-continue' });
      sock.write(second.head);
      await until(() => received.includes('HTTP/1.1 100 Continue\r\n'));
      sock.write(second.body.slice(0, 10));
      const stopped = running.stop('SIGTERM').then((code) => {
        exited = true;
        return code;
      });
      await until(() => refused(running.url));
      // the rest of its body, and a third request right behind it on the same connection
      const third = wakeRequest('after the listener closed');
      sock.write(second.body.slice(10) + third.head + third.body);
      await ended;

      const [answer, refusal, ...more] = responses(received)
        .filter((r) => r.status !== 100)
        .slice(1);
      expect(answer).toMatchObject({ status: 200, headers: { connection: 'close' } });
      // the third is refused with a reason, or the connection ends before it is read
      if (refusal) expect(refusal).toMatchObject({ status: 503, headers: { connection: 'close' } });
      if (refusal) expect(JSON.parse(refusal.body)).toMatchObject({ ok: false, code: 'SHUTTING_DOWN' });
      expect(more).toEqual([]);
      expect(await stopped).toBe(0);
      const texts = eventsOnDisk(running.dataDir).map((e) => e.text);
      expect(texts.some((t) => t.includes('in flight at the signal'))).toBe(true);
      expect(texts.some((t) => t.includes('after the listener closed'))).toBe(false);
    } finally {
      if (!exited) await running.stop('SIGKILL');
      cleanup(dir);
    }
  });

  it('under keep-alive load, stops taking requests at the signal and exits long before the drain deadline', async () => {
    const dir = tempDir();
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    // a drain deadline of an hour: a stop that waited for it would run into the test's timeout
    const running = await startCli({ config: config(3600), dir });
    let exited = false;
    try {
      const seen: Seen[] = [];
      let n = 0;
      // each client goes on until a new connection is refused: the listener is closed then
      const hammer = async () => {
        for (;;) {
          const s = await wake(running.url, agent, `load ${n++}`);
          seen.push(s);
          if (s.error === 'ECONNREFUSED') return;
          if (s.error) await new Promise((r) => setTimeout(r, 5));
        }
      };
      const hammers = Array.from({ length: 16 }, hammer);
      await until(() => seen.filter((s) => s.status === 200).length >= 100);
      const code = await running.stop('SIGTERM');
      exited = true;
      expect(code).toBe(0);
      await Promise.all(hammers);

      const closedAt = Math.min(...seen.filter((s) => s.error === 'ECONNREFUSED').map((s) => s.startedAt));
      // nothing started after the listener closed was taken as new work
      expect(seen.filter((s) => s.startedAt > closedAt && s.status !== undefined && s.status < 300)).toEqual([]);
      // a refusal says why and closes its connection
      for (const s of seen.filter((x) => x.status === 503)) expect(s).toMatchObject({ code: 'SHUTTING_DOWN', connection: 'close' });
      // every wake answered 200 is on disk
      const stored = new Set(eventsOnDisk(running.dataDir).map((e) => e.id));
      expect(seen.filter((s) => s.status === 200 && !stored.has(s.eventId!))).toEqual([]);
    } finally {
      agent.destroy();
      if (!exited) await running.stop('SIGKILL');
      cleanup(dir);
    }
  }, 60_000);

  it('aborts a run still going at the deadline, leaves it queued without counting the attempt, and runs it on the next start', async () => {
    llm.requests.length = 0;
    answerAfter = 'never';
    const dir = tempDir();
    try {
      const first = await startCli({ config: config(1), dir });
      const r = await post(`${first.url}/hooks/agent`, { message: 'never answered', wakeMode: 'next-heartbeat', deliver: false }, auth);
      await until(() => llm.requests.length === 1);
      expect(await first.stop('SIGTERM')).toBe(0);
      await llm.requests[0]!.aborted; // the provider call was cancelled, not left dangling
      expect(runsOnDisk(first.dataDir).get(r.body.runId)).toEqual({ status: 'queued', attempts: 0 });

      answerAfter = undefined;
      const second = await startCli({ config: config(1), dir });
      try {
        const run = await until(async () => {
          const x = (await get(`${second.url}/api/runs/${r.body.runId}`, GW)).body.run;
          return x.status === 'ok' ? x : undefined;
        });
        expect(run).toMatchObject({ status: 'ok', attempts: 1 });
        expect(llm.requests).toHaveLength(2);
        expect(llm.requests[1]!.json.messages.at(-1).content).toContain('never answered');
      } finally {
        expect(await second.stop()).toBe(0);
      }
    } finally {
      cleanup(dir);
    }
  });
});
