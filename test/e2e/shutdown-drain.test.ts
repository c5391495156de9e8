/**
 * SIGTERM with the real CLI, what a client on a kept-alive connection sees (docs/runtime.md,
 * "Shutdown"): the port closes at once, but a connection kept alive from before stays open while
 * the work drains, and a request that arrives on it is answered `503 SHUTTING_DOWN` with
 * `Connection: close`, not met by a reset.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, post, startCli, tempDir, until } from '../helpers/cli.ts';
import { completion, json, startStub, type HttpStub } from '../helpers/http-stub.ts';
import { parseResponse, requestHead } from '../helpers/raw.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const auth = { authorization: `Bearer ${HOOK}` };

function wake(text: string): string {
  const body = JSON.stringify({ text, mode: 'next-heartbeat' });
  return (
    requestHead('POST', '/hooks/wake', { ...auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }) + body
  );
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

describe('SIGTERM and a kept-alive connection', () => {
  let llm: HttpStub;
  let letAnswer: () => void = () => {};
  let held = new Promise<void>((r) => (letAnswer = r));

  beforeAll(async () => {
    // the model answers when the test lets it: the run it serves holds the drain open
    llm = await startStub(async (_req, res) => {
      await held;
      json(res, 200, completion('answer'));
    });
  });
  afterAll(() => llm.close());

  it('answers a request arriving on it during the drain with 503 SHUTTING_DOWN and Connection: close', async () => {
    held = new Promise<void>((r) => (letAnswer = r));
    const dir = tempDir();
    const srv = await startCli({
      dir,
      config: {
        gateway: { shutdownTimeoutSeconds: 3600 },
        hooks: { enabled: true, token: HOOK },
        agents: { defaults: { model: 'llm/m', heartbeat: { every: '0' } }, providers: { llm: { type: 'openai', baseUrl: llm.url } } },
        logging: { level: 'warn' },
      },
    });
    let exited = false;
    try {
      const u = new URL(srv.url);
      const sock = connect(Number(u.port), u.hostname);
      let received = '';
      sock.on('data', (d) => (received += d.toString('utf8')));
      const ended = new Promise<void>((r) => sock.on('close', () => r()));
      sock.write(wake('before the signal'));
      await until(() => parseResponse(received));
      expect(parseResponse(received)).toMatchObject({ status: 200, headers: { connection: 'keep-alive' } });
      const first = received.length;

      // a run is going: the drain lasts until it ends
      expect((await post(`${srv.url}/hooks/agent`, { message: 'hold the drain', deliver: false }, auth)).status).toBe(202);
      await until(() => llm.requests.length === 1);
      const stopped = srv.stop('SIGTERM').then((code) => {
        exited = true;
        return code;
      });
      await until(() => refused(srv.url));

      // the kept-alive connection, idle at the signal, brings one more request
      sock.write(wake('during the drain'));
      await ended;
      const refusal = parseResponse(received.slice(first));
      expect(refusal).toMatchObject({ status: 503, headers: { connection: 'close' } });
      expect(JSON.parse(refusal!.body)).toMatchObject({ ok: false, code: 'SHUTTING_DOWN' });

      letAnswer();
      expect(await stopped).toBe(0);
      const db = new DatabaseSync(join(srv.dataDir, 'hook-intake.db'), { readOnly: true });
      try {
        const texts = (db.prepare('SELECT text FROM events').all() as { text: string }[]).map((e) => e.text);
        expect(texts.some((t) => t.includes('before the signal'))).toBe(true);
        expect(texts.some((t) => t.includes('during the drain'))).toBe(false);
      } finally {
        db.close();
      }
    } finally {
      letAnswer();
      if (!exited) await srv.stop('SIGKILL');
      cleanup(dir);
    }
  });
});
