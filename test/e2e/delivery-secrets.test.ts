/**
 * A channel's token and the reply's text stay out of what the service says
 * about deliveries. The channel here is careless on purpose: like Telegram's,
 * its URL holds the token, and its errors quote that URL and the service's
 * answer, which echoes the token and the text. Replies go through transient,
 * rate-limited and permanent answers, in several parts; then the whole output
 * and the read API's answers are searched.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, get, post, startCli, tempDir, until, type Running } from '../helpers/cli.ts';
import { json, startStub, type HttpStub } from '../helpers/http-stub.ts';

const random = (n: number) => randomBytes(n).toString('base64url');
const HOOK = `hk_${random(30)}`;
const GW = `gw_${random(30)}`;
const BOT_TOKEN = `123456:${random(30)}`;
const MARKER = `mk${random(18)}`;

const PLUGIN = `
import { ChannelError, definePlugin } from 'hook-intake/plugin';

export default definePlugin({
  name: 'careless',
  channels: {
    careless: {
      create: (config: { botToken: string; apiBaseUrl: string }, ctx) => ({
        limits: { requiresTo: true, maxTextLength: 120 },
        async send(msg) {
          const url = config.apiBaseUrl + '/bot' + config.botToken + '/sendMessage';
          const res = await ctx.fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chat_id: msg.to, text: msg.text }) });
          if (res.ok) return;
          const body = await res.text();
          const retryAfter = Number(res.headers.get('retry-after') ?? 0) * 1000;
          throw new ChannelError('POST ' + url + ' answered ' + res.status + ': ' + body + ' (sending ' + msg.text + ')', {
            retryable: res.status >= 500 || res.status === 429,
            ...(retryAfter ? { retryAfterMs: retryAfter } : {}),
          });
        },
      }),
    },
  },
});
`;

/** The first piece of `secret` (8 characters) found in `text`. */
function leaked(text: string, secret: string): string | undefined {
  for (let i = 0; i + 8 <= secret.length; i++) if (text.includes(secret.slice(i, i + 8))) return secret.slice(i, i + 8);
  return undefined;
}

describe('a delivery through a channel whose URL and errors hold its token', () => {
  let stub: HttpStub;
  let srv: Running;
  const answers: string[] = [];
  const seen = new Map<string, number>();

  beforeAll(async () => {
    stub = await startStub((req, res) => {
      const chat = String(req.json?.chat_id);
      const n = (seen.get(chat) ?? 0) + 1;
      seen.set(chat, n);
      // a careless service: every error repeats the whole request, token in the path included
      const echo = `${req.url} ${req.raw.toString('utf8')}`;
      if (chat === '1' && n === 1) return json(res, 502, { ok: false, description: `bad gateway for ${echo}` });
      if (chat === '1' && n === 2) return json(res, 429, { ok: false, description: `too many requests: ${echo}` }, { 'retry-after': '0' });
      if (chat === '2') return json(res, 400, { ok: false, description: `Bad Request: chat not found (${echo})` });
      json(res, 200, { ok: true, result: { message_id: n } });
    });
    const dir = tempDir();
    writeFileSync(join(dir, 'careless.ts'), PLUGIN);
    srv = await startCli({
      dir,
      env: { HOOK_INTAKE_TEST_BOT_TOKEN: BOT_TOKEN },
      config: {
        gateway: { auth: { token: GW } },
        hooks: { enabled: true, token: HOOK },
        plugins: ['./careless.ts'],
        agents: { defaults: { heartbeat: { every: '0' } } },
        channels: { tg: { type: 'careless', botToken: '${HOOK_INTAKE_TEST_BOT_TOKEN}', apiBaseUrl: stub.url } },
        delivery: { initialBackoffMs: 10, maxBackoffMs: 50 },
        logging: { level: 'trace' },
      },
    });
  });
  afterAll(async () => {
    await srv?.stop();
    await stub?.close();
    if (srv) cleanup(srv.dir);
  });

  it('delivers and fails with reasons that hold neither the token nor the reply, in the log or the read API', async () => {
    const api = async (path: string) => {
      const r = await get(`${srv.url}${path}`, GW);
      answers.push(r.text);
      return r.body;
    };
    const send = async (to: string) => {
      const r = await post(
        `${srv.url}/hooks/agent`,
        { message: `reply for chat ${to}: ${MARKER} `.repeat(4), channel: 'tg', to, wakeMode: 'next-heartbeat' },
        { authorization: `Bearer ${HOOK}` },
      );
      expect(r.status).toBe(202);
      return r.body.runId as string;
    };
    const sent = await send('1');
    const refused = await send('2');
    const done = (id: string, status: string) =>
      until(async () => ((await api(`/api/runs/${id}`)).run.delivery.status === status ? true : undefined));
    await done(sent, 'sent');
    await done(refused, 'failed');

    // the service took the parts and saw the token where the channel put it
    expect(stub.requests.some((r) => r.url.includes(BOT_TOKEN))).toBe(true);
    expect(stub.requests.filter((r) => r.json?.chat_id === '1').length).toBeGreaterThan(3);
    const failed = (await api(`/api/runs/${refused}`)).run;
    expect(failed.delivery).toMatchObject({ status: 'failed', attempts: 1 });
    expect(failed.delivery.reason).toContain('answered 400');
    expect(failed.delivery.reason).toContain('[redacted]');

    const runs = await api('/api/runs?limit=50');
    await api('/api/status');
    await api('/api/main/events?limit=50');
    const output = srv.output();
    expect(output).toContain('delivery failed');
    for (const [where, text] of [
      ['the output', output],
      ['the read API', answers.join('\n')],
    ] as const)
      expect(leaked(text, BOT_TOKEN), `the token in ${where}`).toBeUndefined();
    // the reply is a run's own record (its message, reply and summary); nowhere else
    expect(output).not.toContain(MARKER);
    const delivery = JSON.stringify((runs.runs as { delivery: unknown }[]).map((r) => r.delivery));
    expect(delivery).not.toContain(MARKER);
    expect(delivery).not.toContain('reply for chat');
  });
});
