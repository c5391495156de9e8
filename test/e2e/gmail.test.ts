/**
 * The Gmail bridge end to end: a real `serve` and a real `webhooks gmail run`, the stand-in
 * Google in between. A push becomes one agent run per new message in its own session, inside
 * the safety boundary; repeated pushes and a push while serve is down run each message once;
 * neither process prints a token, a secret or a message body.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanup, get, startCli, tempDir, until, type Running } from '../helpers/cli.ts';
import { startStub, type HttpStub } from '../helpers/http-stub.ts';
import { googleUrls, pushBody, startGoogle, type GoogleStandIn } from '../gmail/google-standin.ts';
import { alertMail, invoiceMail, qpMail } from '../gmail/mail.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const PUSH = `pt_${randomBytes(18).toString('hex')}`;
const ACCOUNT = 'ops@example.com';

/** A port free right now, so serve can come back on the same one after a stop. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts `webhooks gmail run`; resolves with its push URL and its output so far. */
async function startRun(configFile: string, dataDir: string) {
  const proc = spawn(process.execPath, [BIN, 'webhooks', 'gmail', 'run', '--config', configFile, '--data', dataDir, '--port', '0'], {
    env: { ...process.env, HOOK_INTAKE_CONFIG: '', HOOK_INTAKE_DATA: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (b: Buffer) => (out += b));
  proc.stderr.on('data', (b: Buffer) => (out += b));
  const exited = new Promise<number | null>((r) => proc.on('exit', r));
  const base = await until(
    () => /listening on (http:\/\/\S+)/.exec(out)?.[1] ?? (proc.exitCode !== null ? Promise.reject(new Error(out)) : undefined),
  );
  return {
    url: `${base}/gmail-pubsub?token=${PUSH}`,
    output: () => out,
    stop: () => {
      proc.kill('SIGTERM');
      return exited;
    },
  };
}

describe('webhooks gmail run beside serve', () => {
  let google: GoogleStandIn;
  /** Where the agents' replies go (a webhook channel), so no reply is printed. */
  let replies: HttpStub;
  let dir: string;
  let port: number;
  let config: unknown;
  let srv: Running;
  let run: Awaited<ReturnType<typeof startRun>>;
  const outputs: (() => string)[] = [];

  const push = async (historyId: string) =>
    (await fetch(run.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: pushBody(ACCOUNT, historyId) })).status;
  const runs = async () =>
    (await get(`${srv.url}/api/runs`, GW)).body.runs as { id: string; sessionKey: string; message: string; status: string }[];
  const bySession = async () => {
    const all = await runs();
    const mail = all.filter((r) => r.sessionKey.startsWith('hook:gmail:'));
    return Object.fromEntries([...new Set(mail.map((r) => r.sessionKey))].map((k) => [k, mail.filter((r) => r.sessionKey === k).length]));
  };

  beforeAll(async () => {
    google = await startGoogle();
    replies = await startStub();
    dir = tempDir('hook-intake-gmail-e2e-');
    port = await freePort();
    config = {
      gateway: { auth: { token: GW } },
      hooks: {
        enabled: true,
        token: HOOK,
        presets: ['gmail'],
        gmail: {
          account: ACCOUNT,
          topic: 'projects/proj/topics/gmail',
          pushToken: PUSH,
          hookUrl: `http://127.0.0.1:${port}/hooks/gmail`,
          oauth: { clientId: google.client.id, clientSecret: google.client.secret, refreshToken: google.client.refreshToken },
          serve: { port: 0 },
          ...googleUrls(google),
        },
      },
      agents: { defaults: { heartbeat: { every: '0' } } },
      channels: { chat: { type: 'webhook', url: `${replies.url}/in` } },
      session: { defaultRoute: { channel: 'chat' } },
    };
    srv = await startCli({ config, dir, args: ['--port', String(port)] });
    outputs.push(srv.output);
    run = await startRun(srv.configFile, srv.dataDir);
    outputs.push(run.output);
  });

  afterAll(async () => {
    await run?.stop();
    await srv?.stop();
    await google?.close();
    await replies?.close();
    cleanup(dir);
  });

  it('a push with two new messages gives two agent runs in two sessions, sender and subject inside the boundary', async () => {
    const latest = google.deliver(invoiceMail('m1'), alertMail('m2'));
    expect(await push(latest)).toBe(204);
    const two = await until(async () => {
      const all = (await runs()).filter((r) => r.sessionKey.startsWith('hook:gmail:'));
      return all.length === 2 && all.every((r) => r.status === 'ok') ? all : undefined;
    });
    expect(two.map((r) => r.sessionKey).sort()).toEqual(['hook:gmail:m1', 'hook:gmail:m2']);
    for (const [id, from, subject] of [
      ['m1', 'Ana Lima <ana@example.org>', 'Facture 2041 échue'],
      ['m2', 'Monitoring 📨 <alerts@monitoring.example.net>', 'Disk usage 91% on db-2'],
    ]) {
      const r = two.find((x) => x.sessionKey === `hook:gmail:${id}`)!;
      const msg = (await get(`${srv.url}/api/runs/${r.id}`, GW)).body.run.message as string;
      const begin = msg.search(/<<<EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]+" source="Email">>>/);
      const end = msg.search(/<<<END_EXTERNAL_UNTRUSTED_CONTENT/);
      expect(begin).toBeGreaterThanOrEqual(0);
      for (const s of [`New email from ${from}`, `Subject: ${subject}`]) {
        expect(msg.indexOf(s)).toBeGreaterThan(begin);
        expect(msg.indexOf(s)).toBeLessThan(end);
      }
    }
    expect(google.mismatches).toEqual([]);
    await until(() => replies.requests.length >= 2);
  });

  it('the same push again runs nothing new', async () => {
    const latest = String(google.historyId);
    expect(await push(latest)).toBe(204);
    expect(await push(latest)).toBe(204);
    expect(await bySession()).toEqual({ 'hook:gmail:m1': 1, 'hook:gmail:m2': 1 });
  });

  it('a push while serve is down gets 503; the redelivery after serve is back runs the message once', async () => {
    expect(await srv.stop()).toBe(0);
    const latest = google.deliver(qpMail('m3'));
    expect(await push(latest)).toBe(503);
    expect(await push(latest)).toBe(503);
    srv = await startCli({ config, dir, args: ['--port', String(port)] });
    outputs.push(srv.output);
    expect(await push(latest)).toBe(204);
    expect(await push(latest)).toBe(204);
    await until(async () => (await runs()).some((r) => r.sessionKey === 'hook:gmail:m3' && r.status === 'ok'));
    expect(await bySession()).toEqual({ 'hook:gmail:m1': 1, 'hook:gmail:m2': 1, 'hook:gmail:m3': 1 });
  });

  it('neither process prints a token, a secret or a message body', async () => {
    const text = outputs.map((o) => o()).join('\n');
    expect(text).toMatch(/listening on/);
    for (const secret of [HOOK, GW, PUSH, google.client.secret, google.client.refreshToken, ...google.issued])
      expect(text).not.toContain(secret);
    for (const body of ['invoice from October', 'Café', 'résumé', '91% &', 'Garçon', 'wrapped here']) expect(text).not.toContain(body);
  });
});
