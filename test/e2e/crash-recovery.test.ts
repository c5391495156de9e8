/**
 * Crash safety under load (docs/runtime.md, "Crash safety"): the real CLI, an OpenAI-compatible
 * stand-in that holds some calls until the kill (so runs are in flight) and a webhook
 * receiver. SIGKILL mid-burst, restart on the same data dir: every 2xx'd wake
 * and run is there, every run reaches a final state, every reply is delivered.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, get, post, startCli, tempDir, until, type Running } from '../helpers/cli.ts';
import { completion, json, startStub, type HttpStub } from '../helpers/http-stub.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const SECRET = `whsec_${randomBytes(16).toString('hex')}`;
const auth = { authorization: `Bearer ${HOOK}` };
const FINAL = ['ok', 'error', 'timeout'];
/** The job a model call is for (`job 12`); none for a heartbeat, whose prompt may quote jobs. */
const jobOf = (prompt: string) => (prompt.startsWith('Heartbeat.') ? undefined : /job \d+/.exec(prompt)?.[0]);

interface RunView {
  id: string;
  message: string;
  status: string;
  attempts: number;
  error: string | null;
  delivery: { status: string; reason: string | null };
}

describe('crash recovery with the real CLI', () => {
  let llm: HttpStub;
  let receiver: HttpStub;
  const delivered = new Set<string>();

  beforeAll(async () => {
    llm = await startStub();
    receiver = await startStub((req, res) => {
      // Standard Webhooks: the key is the base64 after whsec_, the signed bytes are id.timestamp.body
      const signed = `${String(req.headers['webhook-id'])}.${String(req.headers['webhook-timestamp'])}.`;
      const want = `v1,${createHmac('sha256', Buffer.from(SECRET.slice('whsec_'.length), 'base64'))
        .update(signed)
        .update(req.raw)
        .digest('base64')}`;
      if (req.headers['webhook-signature'] !== want) return json(res, 401, { error: 'bad signature' });
      delivered.add(req.json.runId);
      json(res, 200, { ok: true });
    });
  });
  afterAll(async () => {
    await llm.close();
    await receiver.close();
  });

  const config = () => ({
    gateway: { auth: { token: GW } },
    hooks: { enabled: true, token: HOOK },
    agents: {
      defaults: { model: 'llm/stand-in', maxConcurrent: 4, heartbeat: { every: '0' } },
      providers: { llm: { type: 'openai', baseUrl: `${llm.url}/v1`, models: { 'stand-in': 'local-model' } } },
    },
    channels: { out: { type: 'webhook', url: `${receiver.url}/deliver`, secret: SECRET } },
    session: { defaultRoute: { channel: 'out' } },
    delivery: { initialBackoffMs: 50 },
    logging: { level: 'warn' },
  });

  const runs = async (srv: Running): Promise<Map<string, RunView>> =>
    new Map(((await get(`${srv.url}/api/runs?limit=10000`, GW)).body.runs as RunView[]).map((r) => [r.id, r]));

  it('keeps every 2xx of hundreds of concurrent wakes and runs across SIGKILL, and finishes and delivers every run after restart', async () => {
    // the model answers at once, except the first HELD calls of jobs, which it holds until the kill cuts them:
    // runs are finished before the kill and in flight at it, whatever the machine's speed
    const HELD = 2;
    let answered = 0;
    const held: { job: string; aborted: Promise<void> }[] = [];
    llm.handler = async (req, res) => {
      const last = String(req.json.messages.at(-1).content);
      const beat = last.startsWith('Heartbeat.');
      const job = jobOf(last);
      if (job && held.length < HELD) {
        held.push({ job, aborted: req.aborted });
        await req.aborted;
        return;
      }
      json(res, 200, completion(beat ? 'HEARTBEAT_OK' : `done: ${job ?? '?'}`));
      answered++;
    };
    const dir = tempDir();
    try {
      const first = await startCli({ config: config(), dir });
      const accepted: { kind: 'wake' | 'agent'; id: string }[] = [];
      const fire = async (i: number) => {
        const isAgent = i % 2 === 0;
        try {
          const r = isAgent
            ? await post(
                `${first.url}/hooks/agent`,
                { message: `job ${i}`, sessionKey: `hook:load:${i % 25}`, wakeMode: i % 4 === 0 ? 'now' : 'next-heartbeat' },
                auth,
              )
            : await post(`${first.url}/hooks/wake`, { text: `event ${i}`, mode: i % 3 === 0 ? 'now' : 'next-heartbeat' }, auth);
          if (r.status === 200 || r.status === 202)
            accepted.push(isAgent ? { kind: 'agent', id: r.body.runId } : { kind: 'wake', id: r.body.eventId });
        } catch {
          // the kill cut the connection before an answer: nothing was promised
        }
      };
      // 400 requests in waves of 10 every 20 ms, so the kill usually lands mid-burst
      const TOTAL = 400;
      const burst = Array.from({ length: TOTAL }, (_, i) => new Promise((r) => setTimeout(r, Math.floor(i / 10) * 20)).then(() => fire(i)));
      // kill once plenty was accepted, some runs have finished and the held ones are in flight
      await until(() => accepted.length >= 120 && answered >= 1 && held.length === HELD, undefined, 2);
      const answeredAtKill = answered;
      first.proc.kill('SIGKILL');
      // the held calls were in flight: the kill, not an answer, ended them
      await Promise.all(held.map((h) => h.aborted));
      await Promise.all(burst);
      await first.stop();
      const wakeIds = accepted.filter((a) => a.kind === 'wake').map((a) => a.id);
      const runIds = accepted.filter((a) => a.kind === 'agent').map((a) => a.id);
      expect(runIds.length).toBeGreaterThan(40);
      expect(wakeIds.length).toBeGreaterThan(40);

      const restartedAt = Date.now();
      const second = await startCli({ config: config(), dir });
      try {
        const events = (await get(`${second.url}/api/main/events?limit=10000`, GW)).body.events as { id: string }[];
        const eventIds = new Set(events.map((e) => e.id));
        expect(wakeIds.filter((id) => !eventIds.has(id))).toEqual([]);

        const before = await runs(second);
        expect(runIds.filter((id) => !before.has(id))).toEqual([]);

        const final = await until(
          async () => {
            const now = await runs(second);
            return runIds.every((id) => FINAL.includes(now.get(id)!.status)) ? now : undefined;
          },
          60_000,
          100,
        );
        const drainMs = Date.now() - restartedAt;
        expect(runIds.map((id) => final.get(id)!.status).filter((s) => s !== 'ok')).toEqual([]);
        // a run is started at most twice: once before the kill, once after
        expect(runIds.filter((id) => final.get(id)!.attempts > 2)).toEqual([]);

        await until(
          async () => {
            const now = await runs(second);
            return runIds.every((id) => now.get(id)!.delivery.status === 'sent');
          },
          30_000,
          100,
        );
        expect(runIds.filter((id) => !delivered.has(id))).toEqual([]);
        // each run whose model call the kill cut was called again after the restart, and finished (its attempts
        // say less: the start is stored beside the model call, so the kill may have come before it was)
        const calls = (job: string) => llm.requests.filter((r) => jobOf(String(r.json.messages.at(-1).content)) === job).length;
        expect(held.map((h) => ({ job: h.job, calls: calls(h.job) }))).toEqual(held.map((h) => ({ job: h.job, calls: 2 })));
        expect(held.map((h) => [...final.values()].find((r) => r.message.includes(`\n${h.job}\n`))?.status)).toEqual(held.map(() => 'ok'));
        console.info(
          `crash-recovery: ${accepted.length} of ${TOTAL} requests answered 2xx before SIGKILL (${runIds.length} runs, ${wakeIds.length} wakes); ` +
            `${answeredAtKill} model calls answered and ${HELD} in flight at the kill; all runs final ${drainMs} ms after restart, all delivered`,
        );
      } finally {
        expect(await second.stop()).toBe(0);
      }
    } finally {
      cleanup(dir);
    }
  }, 120_000);

  it('re-queues a run found running once, and marks it error when it is found running again', async () => {
    // the model never answers this run; each start is visible as one request at the stand-in
    llm.handler = () => undefined;
    llm.requests.length = 0;
    const dir = tempDir();
    // every server this test starts is killed at its end, whatever failed in between
    const started: Running[] = [];
    const start = async () => {
      const srv = await startCli({ config: config(), dir });
      started.push(srv);
      return srv;
    };
    try {
      const first = await start();
      const r = await post(`${first.url}/hooks/agent`, { message: 'stuck job', name: 'Stuck', wakeMode: 'next-heartbeat' }, auth);
      expect(r.status).toBe(202);
      await until(() => llm.requests.length === 1);
      first.proc.kill('SIGKILL');
      await first.stop();

      const second = await start();
      await until(() => llm.requests.length === 2); // re-queued and started again
      // the start is committed beside the agent call, not before it: read once it is stored
      const started = await until(async () => {
        const run = (await get(`${second.url}/api/runs/${r.body.runId}`, GW)).body.run;
        return run.attempts === 2 && run;
      });
      expect(started).toMatchObject({ status: 'running', attempts: 2 });
      second.proc.kill('SIGKILL');
      await second.stop();

      const third = await start();
      try {
        const run = (await get(`${third.url}/api/runs/${r.body.runId}`, GW)).body.run;
        expect(run).toMatchObject({ status: 'error', error: 'interrupted twice by a service restart', attempts: 2 });
        expect(run.finishedAt).toBeGreaterThan(0);
        const events = (await get(`${third.url}/api/main/events?status=pending`, GW)).body.events as { text: string; runId: string }[];
        // the caller's name goes inside the boundary, before the reason
        expect(events.find((e) => e.runId === r.body.runId)?.text).toMatch(
          /^Hook \(error\): SECURITY NOTICE: [^\n]*\n<<<[^\n]*>>>\nStuck: interrupted twice by a service restart\n/,
        );
        expect(llm.requests).toHaveLength(2);
      } finally {
        expect(await third.stop()).toBe(0);
      }
    } finally {
      for (const srv of started) if (srv.proc.exitCode === null && srv.proc.signalCode === null) srv.proc.kill('SIGKILL');
      cleanup(dir);
    }
  });
});
