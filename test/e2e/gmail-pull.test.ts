/**
 * The Gmail bridge in pull mode end to end (docs/gmail.md, "Pull mode"): a real `serve` and a
 * real `webhooks gmail run`, the stand-in Google and the stand-in Pub/Sub around them. A pulled
 * notice becomes one agent run per new message and is acknowledged; a notice pulled while serve
 * is down stays unacknowledged and, handed out again once serve is back, runs each message once;
 * a repeated notice runs nothing; SIGTERM during a long poll ends the process at once; neither
 * process prints a token, a secret or a message body.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { googleUrls, startGoogle, type GoogleStandIn } from '../gmail/google-standin.ts';
import { alertMail, invoiceMail, qpMail } from '../gmail/mail.ts';
import { startPubSub, type PubSubStandIn } from '../gmail/pubsub-standin.ts';
import { BIN, cleanup, get, startCli, tempDir, until, type Running } from '../helpers/cli.ts';
import { startStub, type HttpStub } from '../helpers/http-stub.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const ACCOUNT = 'ops@example.com';
const PULL = 'pubsub.projects.subscriptions.pull';

/** A port free right now, so serve can come back on the same one after a stop. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts `webhooks gmail run`; resolves once it says it is pulling. */
async function startRun(configFile: string, dataDir: string) {
  const proc = spawn(process.execPath, [BIN, 'webhooks', 'gmail', 'run', '--config', configFile, '--data', dataDir], {
    env: { ...process.env, HOOK_INTAKE_CONFIG: '', HOOK_INTAKE_DATA: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (b: Buffer) => (out += b));
  proc.stderr.on('data', (b: Buffer) => (out += b));
  const exited = new Promise<number | null>((r) => proc.on('exit', r));
  const subscription = await until(
    () => /pulling from (\S+)/.exec(out)?.[1] ?? (proc.exitCode !== null ? Promise.reject(new Error(out)) : undefined),
  );
  return {
    subscription,
    output: () => out,
    exited,
    stop: () => {
      proc.kill('SIGTERM');
      return exited;
    },
  };
}

describe('webhooks gmail run in pull mode beside serve', () => {
  let google: GoogleStandIn;
  let pubsub: PubSubStandIn;
  /** Where the agents' replies go (a webhook channel), so no reply is printed. */
  let replies: HttpStub;
  let dir: string;
  let port: number;
  let config: unknown;
  let srv: Running;
  let run: Awaited<ReturnType<typeof startRun>>;
  const outputs: (() => string)[] = [];

  const pulls = () => pubsub.calls.filter((c) => c.id === PULL).length;
  /** The bridge handled what it was given and waits in a new pull. */
  const idleAfter = (n: number) => until(() => pulls() > n && pubsub.waiting() === 1);
  const notice = (historyId: string) => pubsub.publish({ emailAddress: ACCOUNT, historyId });
  const runs = async () =>
    (await get(`${srv.url}/api/runs`, GW)).body.runs as { id: string; sessionKey: string; message: string; status: string }[];
  const bySession = async () => {
    const mail = (await runs()).filter((r) => r.sessionKey.startsWith('hook:gmail:'));
    return Object.fromEntries([...new Set(mail.map((r) => r.sessionKey))].map((k) => [k, mail.filter((r) => r.sessionKey === k).length]));
  };

  beforeAll(async () => {
    google = await startGoogle();
    pubsub = await startPubSub(google);
    replies = await startStub();
    dir = tempDir('hook-intake-gmail-pull-e2e-');
    port = await freePort();
    config = {
      gateway: { auth: { token: GW } },
      hooks: {
        enabled: true,
        token: HOOK,
        presets: ['gmail'],
        gmail: {
          account: ACCOUNT,
          mode: 'pull',
          topic: 'projects/proj/topics/gmail',
          subscription: 'gmail-pull',
          hookUrl: `http://127.0.0.1:${port}/hooks/gmail`,
          oauth: { clientId: google.client.id, clientSecret: google.client.secret, refreshToken: google.client.refreshToken },
          ...googleUrls(google),
          pubsubBaseUrl: pubsub.url,
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
    await pubsub?.close();
    await google?.close();
    await replies?.close();
    cleanup(dir);
  });

  it('a pulled notice with two new messages gives two agent runs in two sessions, and is acknowledged', async () => {
    expect(run.subscription).toBe('projects/proj/subscriptions/gmail-pull');
    await idleAfter(0);
    const n = notice(google.deliver(invoiceMail('m1'), alertMail('m2')));
    await until(() => pubsub.acked.includes(n));
    const two = await until(async () => {
      const all = (await runs()).filter((r) => r.sessionKey.startsWith('hook:gmail:'));
      return all.length === 2 && all.every((r) => r.status === 'ok') ? all : undefined;
    });
    expect(two.map((r) => r.sessionKey).sort()).toEqual(['hook:gmail:m1', 'hook:gmail:m2']);
    const m1 = two.find((r) => r.sessionKey === 'hook:gmail:m1')!;
    const msg = (await get(`${srv.url}/api/runs/${m1.id}`, GW)).body.run.message as string;
    const begin = msg.search(/<<<EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]+" source="Email">>>/);
    expect(begin).toBeGreaterThanOrEqual(0);
    expect(msg.indexOf('Subject: Facture 2041 échue')).toBeGreaterThan(begin);
    expect(pubsub.acked).toEqual([n]);
    expect(pubsub.mismatches).toEqual([]);
    expect(google.mismatches).toEqual([]);
    await until(() => replies.requests.length >= 2);
  });

  it('the same notice handed out again is acknowledged again and runs nothing new', async () => {
    const [n] = pubsub.acked;
    pubsub.redeliver(n!);
    await until(() => pubsub.acked.length === 2);
    expect(await bySession()).toEqual({ 'hook:gmail:m1': 1, 'hook:gmail:m2': 1 });
  });

  it('a notice pulled while serve is down stays unacknowledged; handed out again once serve is back, it runs once', async () => {
    await idleAfter(0);
    expect(await srv.stop()).toBe(0);
    const before = pulls();
    const n = notice(google.deliver(qpMail('m3')));
    await idleAfter(before);
    expect(pubsub.outstanding()).toEqual([n]);
    expect(pubsub.acked).not.toContain(n);
    srv = await startCli({ config, dir, args: ['--port', String(port)] });
    outputs.push(srv.output);
    pubsub.expireDeadlines();
    await until(() => pubsub.acked.includes(n));
    expect(pubsub.deliveries(n)).toBe(2);
    await until(async () => (await runs()).some((r) => r.sessionKey === 'hook:gmail:m3' && r.status === 'ok'));
    expect(await bySession()).toEqual({ 'hook:gmail:m1': 1, 'hook:gmail:m2': 1, 'hook:gmail:m3': 1 });
  });

  it('SIGTERM during a long poll ends the process with 0, the pull dropped', async () => {
    await idleAfter(0);
    expect(await run.stop()).toBe(0);
    await until(() => pubsub.waiting() === 0);
    expect(pubsub.outstanding()).toEqual([]);
  });

  it('neither process prints a token, a secret or a message body', async () => {
    const text = outputs.map((o) => o()).join('\n');
    expect(text).toMatch(/pulling from/);
    for (const secret of [HOOK, GW, google.client.secret, google.client.refreshToken, ...google.issued]) expect(text).not.toContain(secret);
    for (const body of ['invoice from October', 'Café', 'résumé', '91% &', 'Garçon', 'wrapped here']) expect(text).not.toContain(body);
  });
});
