/**
 * Chat channels end to end through the real service (`serve`, an agent run,
 * the outbox): a `telegram` and a `slack` channel point at stand-ins that
 * check every request against the provider's published spec. A reply arrives
 * rendered as the channel renders it; a reply of three parts whose second is
 * rate limited arrives once each, in order; a wrong `to` is refused at
 * intake; a reply that renders to nothing is skipped; and a Telegram update through the example transform is answered
 * in the same chat.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, get, post, ROOT, startCli, until, type Running } from '../helpers/cli.ts';
import { startProviderStub, type Answer, type ProviderStub, type StubRequest } from '../helpers/provider-stub.ts';
import { slackSpec, telegramSpec } from '../helpers/provider-specs.ts';
import { testGeneration } from '../helpers/runtime.ts';

const random = (n: number) => randomBytes(n).toString('base64url');
const HOOK = `hk_${random(30)}`;
const GW = `gw_${random(30)}`;
const TG_TOKEN = `123456789:${random(30)}`;
const TG_SECRET = `tgs_${random(24)}`.replace(/[^A-Za-z0-9_-]/g, '_');
const SLACK_TOKEN = `xoxb-${random(24)}`;
const SLACK_CHANNEL = 'C0123456789';
/** Telegram parts of at most this many characters, so a reply of a few KB has three. */
const TG_CHUNK = 700;

/** Chat ids, one per scenario, so the stand-in's script can tell them apart. */
const CHAT = { simple: 1001, long: 1002, inbound: 1003, empty: 1004 };

const sent = (chat: number): Answer => ({
  status: 200,
  json: { ok: true, result: { message_id: 1, date: 0, chat: { id: chat, type: 'private' }, text: 'x' } },
});
const rateLimited: Answer = {
  status: 429,
  json: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 0', parameters: { retry_after: 0 } },
};

const REPLY = [
  '# Status',
  '',
  'All **green** at <b>noon</b> & later; see [the board](https://example.com/board?a=1&b=2).',
  '',
  '```sh',
  'make deploy && echo "<done>"',
  '```',
].join('\n');
const LONG_REPLY = Array.from(
  { length: 7 },
  (_, i) => `Paragraph ${i + 1}: ${'the deploy went out and the checks passed, '.repeat(4).trim()}`,
).join('\n\n');

describe('chat channels through the running service', () => {
  let tg: ProviderStub;
  let slack: ProviderStub;
  let srv: Running;
  let longRequests = 0;
  const hook = (path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${HOOK}` }) =>
    post(`${srv.url}/hooks/${path}`, body, headers);
  const run = async (id: string) => (await get(`${srv.url}/api/runs/${id}`, GW)).body.run;
  const delivered = (id: string) =>
    until(async () => {
      const r = await run(id);
      return r.delivery.status === 'pending' ? undefined : r;
    });
  /** The parts the channel itself makes of `text` (the same plugin, outside the service). */
  const telegramParts = (text: string): string[] =>
    testGeneration({
      channels: { telegram: { type: 'telegram', botToken: TG_TOKEN, apiBaseUrl: tg.url, textChunkLimit: TG_CHUNK } },
    }).channels.get('telegram')!.channel.render!(text);
  const toChat = (chat: number) => tg.requests.filter((r: StubRequest) => r.body?.chat_id === chat);

  beforeAll(async () => {
    tg = await startProviderStub({
      validate: telegramSpec(),
      script: (req) => {
        const chat = Number(req.body?.chat_id);
        // the long reply's second part is rate limited once
        if (chat === CHAT.long && ++longRequests === 2) return rateLimited;
        return sent(chat);
      },
    });
    slack = await startProviderStub({
      validate: slackSpec(),
      script: () => ({
        status: 200,
        json: {
          ok: true,
          channel: SLACK_CHANNEL,
          ts: '1893456000.000100',
          message: { type: 'message', text: 'x', ts: '1893456000.000100' },
        },
      }),
    });
    srv = await startCli({
      env: { E2E_TG_TOKEN: TG_TOKEN, E2E_TG_SECRET: TG_SECRET, E2E_SLACK_TOKEN: SLACK_TOKEN },
      config: {
        gateway: { auth: { token: GW } },
        hooks: {
          enabled: true,
          token: HOOK,
          transformsDir: join(ROOT, 'transforms'),
          // as docs/mappings.md gives it
          mappings: [
            {
              id: 'telegram',
              match: { path: 'telegram' },
              name: 'Telegram',
              verify: { type: 'telegram', secret: '${E2E_TG_SECRET}' },
              transform: { module: 'telegram.ts' },
            },
          ],
        },
        agents: {
          defaults: { heartbeat: { every: '0' } },
          // an agent whose reply is only a link reference definition: Telegram shows nothing of it
          providers: {
            echo: { type: 'echo' },
            definition: {
              type: 'command',
              command: [process.execPath, '-e', "process.stdout.write('[ref]: https://example.com/only-a-definition')"],
              input: 'message',
            },
          },
        },
        channels: {
          telegram: { type: 'telegram', botToken: '${E2E_TG_TOKEN}', apiBaseUrl: tg.url, textChunkLimit: TG_CHUNK },
          slack: { type: 'slack', botToken: '${E2E_SLACK_TOKEN}', apiBaseUrl: `${slack.url}/api` },
        },
        delivery: { initialBackoffMs: 10, maxBackoffMs: 50 },
      },
    });
  });
  afterAll(async () => {
    await srv?.stop();
    await tg?.close();
    await slack?.close();
    if (srv) cleanup(srv.dir);
    // every request either stand-in saw was one its provider's spec allows
    tg?.expectClean();
    slack?.expectClean();
  });

  it('delivers a reply to Telegram rendered as HTML, in a request the Bot API spec allows', async () => {
    const r = await hook('agent', { message: REPLY, deliver: true, channel: 'telegram', to: String(CHAT.simple) });
    expect(r.status).toBe(202);
    const done = await delivered(r.body.runId);
    expect(done.delivery).toMatchObject({ status: 'sent', channel: 'telegram', to: String(CHAT.simple) });
    const reqs = toChat(CHAT.simple);
    expect(reqs.map((q) => q.body.text)).toEqual(telegramParts(done.reply));
    const [req] = reqs;
    expect(req!.path).toBe(`/bot${TG_TOKEN}/sendMessage`);
    expect(req!.body).toMatchObject({ parse_mode: 'HTML', link_preview_options: { is_disabled: true } });
    expect(req!.body.text).toContain('<b>Status</b>');
    expect(req!.body.text).toContain('&lt;b&gt;noon&lt;/b&gt; &amp; later');
    expect(req!.body.text).toContain('<a href="https://example.com/board?a=1&amp;b=2">the board</a>');
    expect(req!.body.text).toContain('<pre><code class="language-sh">make deploy &amp;&amp; echo "&lt;done&gt;"</code></pre>');
    expect(tg.problems).toEqual([]);
  });

  it('delivers a reply to Slack as mrkdwn', async () => {
    const r = await hook('agent', { message: REPLY, deliver: true, channel: 'slack', to: SLACK_CHANNEL });
    expect(r.status).toBe(202);
    const done = await delivered(r.body.runId);
    expect(done.delivery).toMatchObject({ status: 'sent', channel: 'slack' });
    expect(slack.requests).toHaveLength(1);
    const [req] = slack.requests;
    expect(req!.path).toBe('/api/chat.postMessage');
    expect(req!.headers.authorization).toBe(`Bearer ${SLACK_TOKEN}`);
    expect(req!.body).toMatchObject({ channel: SLACK_CHANNEL });
    expect(req!.body.text).toContain('*Status*');
    expect(req!.body.text).toContain('&lt;b&gt;noon&lt;/b&gt; &amp; later');
    expect(req!.body.text).toContain('<https://example.com/board?a=1&amp;b=2|the board>');
    expect(slack.problems).toEqual([]);
  });

  it('posts a reply of three parts once each, in order, the rate-limited second part twice', async () => {
    const r = await hook('agent', { message: LONG_REPLY, deliver: true, channel: 'telegram', to: String(CHAT.long) });
    expect(r.status).toBe(202);
    const done = await delivered(r.body.runId);
    expect(done.delivery).toMatchObject({ status: 'sent', attempts: 2 });
    const parts = telegramParts(done.reply);
    expect(parts).toHaveLength(3);
    const [one, two, three] = parts;
    expect(toChat(CHAT.long).map((q) => q.body.text)).toEqual([one, two, two, three]);
    expect(tg.problems).toEqual([]);
  });

  it('refuses a recipient that does not fit the channel with a 400 naming to, and sends nothing', async () => {
    const before = tg.requests.length;
    const r = await hook('agent', { message: 'hi', deliver: true, channel: 'telegram', to: 'general chat' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ ok: false, code: 'INVALID_PAYLOAD', field: 'to' });
    expect(r.body.error).toMatch(/^to: must be a chat id/);
    const slackWrong = await hook('agent', { message: 'hi', deliver: true, channel: 'slack', to: '#general' });
    expect(slackWrong.status).toBe(400);
    expect(slackWrong.body).toMatchObject({ field: 'to' });
    expect(tg.requests.length).toBe(before);
  });

  it('skips a reply that renders to nothing, with the reason empty reply, and posts nothing', async () => {
    const r = await hook('agent', { message: 'hi', model: 'definition/any', deliver: true, channel: 'telegram', to: String(CHAT.empty) });
    expect(r.status).toBe(202);
    const done = await delivered(r.body.runId);
    expect(done.delivery).toMatchObject({ status: 'skipped', reason: 'empty reply', attempts: 0 });
    expect(toChat(CHAT.empty)).toEqual([]);
  });

  it('answers a Telegram update through the example transform in the same chat', async () => {
    const update = {
      update_id: 10_000,
      message: {
        message_id: 7,
        from: { id: 42, is_bot: false, first_name: 'Ana', username: 'ana_ops' },
        chat: { id: CHAT.inbound, type: 'private' },
        date: 1_700_000_000,
        text: 'is the deploy done?',
      },
    };
    const refused = await hook('telegram', update, { 'x-telegram-bot-api-secret-token': 'wrong' });
    expect(refused.status).toBe(401);
    const r = await hook('telegram', update, { 'x-telegram-bot-api-secret-token': TG_SECRET });
    expect(r.status).toBe(202);
    const done = await delivered(r.body.runId);
    expect(done.delivery).toMatchObject({ status: 'sent', channel: 'telegram', to: String(CHAT.inbound) });
    const reqs = toChat(CHAT.inbound);
    expect(reqs.length).toBeGreaterThan(0);
    expect(reqs.map((q) => q.body.text)).toEqual(telegramParts(done.reply));
    expect(reqs.map((q) => q.body.text).join('\n')).toContain('is the deploy done?');
    expect(tg.problems).toEqual([]);
  });
});
