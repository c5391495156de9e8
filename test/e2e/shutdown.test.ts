/**
 * SIGTERM (SPEC §2, §7): intake stops at once, a running run may finish within
 * `gateway.shutdownTimeoutSeconds`, runs not started stay queued on disk and
 * run on the next start, and the process exits 0.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, get, post, startCli, tempDir, until } from '../helpers/cli.ts';
import { completion, json, startStub, type HttpStub } from '../helpers/http-stub.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const auth = { authorization: `Bearer ${HOOK}` };

/** Run rows straight from the database file of a stopped service. */
function runsOnDisk(dataDir: string): Map<string, { status: string; attempts: number }> {
  const db = new DatabaseSync(join(dataDir, 'hook-intake.db'), { readOnly: true });
  try {
    const rows = db.prepare("SELECT id, status, attempts FROM runs WHERE kind = 'hook'").all() as { id: string; status: string; attempts: number }[];
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

describe('SIGTERM with the real CLI', () => {
  let llm: HttpStub;
  /** Milliseconds the stand-in model waits before answering; Infinity never answers. */
  let delayMs = 0;
  /** Model calls answered so far. */
  let answered = 0;

  beforeAll(async () => {
    llm = await startStub(async (req, res) => {
      if (delayMs === Infinity) return;
      await new Promise((r) => setTimeout(r, delayMs));
      json(res, 200, completion(`answer ${req.json.messages.length}`));
      answered++;
    });
  });
  afterAll(() => llm.close());

  const config = (shutdownTimeoutSeconds: number) => ({
    gateway: { auth: { token: GW }, shutdownTimeoutSeconds },
    hooks: { enabled: true, token: HOOK },
    agents: { defaults: { model: 'llm/m', maxConcurrent: 1, heartbeat: { every: '0' } }, providers: { llm: { type: 'openai', baseUrl: llm.url } } },
    channels: { console: {} },
    logging: { level: 'warn' },
  });

  it('lets the running run finish, keeps the queued ones for the next start, refuses new requests, and exits 0', async () => {
    llm.requests.length = 0;
    answered = 0;
    delayMs = 2500;
    const dir = tempDir();
    try {
      const first = await startCli({ config: config(10), dir });
      const ids: string[] = [];
      for (const m of ['running one', 'queued two', 'queued three']) {
        const r = await post(`${first.url}/hooks/agent`, { message: m, sessionKey: `hook:${m.replace(' ', '-')}`, wakeMode: 'next-heartbeat', deliver: false }, auth);
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
      expect(await exited).toBe(0);

      const disk = runsOnDisk(first.dataDir);
      expect(disk.get(ids[0]!)).toEqual({ status: 'ok', attempts: 1 });
      expect(disk.get(ids[1]!)).toEqual({ status: 'queued', attempts: 0 });
      expect(disk.get(ids[2]!)).toEqual({ status: 'queued', attempts: 0 });
      expect(llm.requests).toHaveLength(1);
      expect(eventsOnDisk(first.dataDir).filter((e) => e.text.includes('too late')).map((e) => e.id).sort()).toEqual(lateIds.sort());

      delayMs = 0;
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

  it('aborts a run still going at the deadline, leaves it queued without counting the attempt, and runs it on the next start', async () => {
    llm.requests.length = 0;
    delayMs = Infinity;
    const dir = tempDir();
    try {
      const first = await startCli({ config: config(1), dir });
      const r = await post(`${first.url}/hooks/agent`, { message: 'never answered', wakeMode: 'next-heartbeat', deliver: false }, auth);
      await until(() => llm.requests.length === 1);
      expect(await first.stop('SIGTERM')).toBe(0);
      await llm.requests[0]!.aborted; // the provider call was cancelled, not left dangling
      expect(runsOnDisk(first.dataDir).get(r.body.runId)).toEqual({ status: 'queued', attempts: 0 });

      delayMs = 0;
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
