/**
 * All eight chat channels end to end through the real service: one `serve`
 * with telegram, whatsapp, discord, slack, mattermost, msteams, signal
 * (signal-cli's JSON-RPC daemon) and imessage (BlueBubbles) configured, each
 * pointed at a stand-in that checks every request against the provider's
 * published spec (test/helpers/channel-stand-ins.ts), and the `echo` agent,
 * whose reply is the hook's message inside the safety boundary (the default
 * for a hook, and rendered by each channel like the rest). For each channel: a short reply arrives
 * rendered as the channel renders it; a reply of over 9,000 characters
 * arrives in parts within the service's limit, in order; a rate limit is
 * waited out for as long as the service said, then the reply arrives; a
 * permanent refusal fails the delivery after one attempt with the service's
 * reason. The 32 deliveries run at once. Last, the service's output and the
 * read API are searched for every channel's secret.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, get, post, startCli, until, type Running } from '../helpers/cli.ts';
import { expectNoneOf, expectSplit, longReply } from '../helpers/channel-cases.ts';
import { SHORT_REPLY, STAND_INS, TEAMS_ACCESS_TOKEN, scriptOf, type Case, type StandIn } from '../helpers/channel-stand-ins.ts';
import { startProviderStub, type ProviderStub, type StubRequest } from '../helpers/provider-stub.ts';
import { testGeneration } from '../helpers/runtime.ts';

const random = (n: number) => randomBytes(n).toString('base64url');
const HOOK = `hk_${random(30)}`;
const GW = `gw_${random(30)}`;
const LONG = longReply();
const MESSAGE: Record<Case, string> = { short: SHORT_REPLY, long: LONG, limited: SHORT_REPLY, refused: SHORT_REPLY };
/** The hint every rate limit gives (one second); the backoff alone would wait at most 60 ms. */
const HINT_MS = 1000;

interface RunRecord {
  id: string;
  reply: string;
  delivery: { status: string; reason: string | null; channel: string | null; to: string | null; attempts: number };
}

describe('all eight chat channels through the running service', () => {
  const stubs = new Map<string, ProviderStub>();
  /** Each case's run, as the read API shows it once every delivery is sent or failed. */
  let finished: Promise<Map<string, RunRecord>>;
  const readApi: string[] = [];
  let srv: Running;

  const api = async (path: string) => {
    const r = await get(`${srv.url}${path}`, GW);
    readApi.push(r.text);
    return r.body;
  };
  /** Waits with one poll of the run list for all of `ids`, then reads each run. */
  const whenDelivered = async (ids: Map<string, string>): Promise<Map<string, RunRecord>> => {
    const wanted = new Set(ids.values());
    await until(
      async () => {
        const runs = (await get(`${srv.url}/api/runs?limit=100`, GW)).body.runs as RunRecord[];
        const done = runs.filter((r) => wanted.has(r.id) && r.delivery.status !== 'pending');
        return done.length === wanted.size;
      },
      20_000,
      100,
    );
    const out = new Map<string, RunRecord>();
    for (const [key, id] of ids) out.set(key, (await api(`/api/runs/${id}`)).run);
    return out;
  };
  const requestsTo = (s: StandIn, c: Case): StubRequest[] => stubs.get(s.name)!.requests.filter((r) => s.recipientOf(r) === s.to[c]);
  /** The parts the channel itself makes of `text` (the same plugin, outside the service). */
  const partsOf = (s: StandIn, text: string): string[] => {
    const g = testGeneration({ channels: { [s.name]: s.config(stubs.get(s.name)!.url, s.secrets) } });
    return g.channels.get(s.name)!.channel.render!(text);
  };
  /** How long the outbox waited before each retry of a run, as it logged it. */
  const retryWaits = (runId: string): number[] =>
    srv
      .output()
      .split('\n')
      .filter((line) => line.includes('"delivery failed; will retry"') && line.includes(runId))
      .map((line) => JSON.parse(line).retryInMs);

  beforeAll(async () => {
    for (const s of STAND_INS) stubs.set(s.name, await startProviderStub({ validate: s.validate, script: scriptOf(s) }));
    const env: Record<string, string> = {};
    const channels: Record<string, unknown> = {};
    for (const s of STAND_INS) {
      Object.assign(env, s.secrets);
      // the service reads each secret from the environment, as the docs advise
      const refs = Object.fromEntries(Object.keys(s.secrets).map((k) => [k, `\${${k}}`]));
      channels[s.name] = s.config(stubs.get(s.name)!.url, refs);
    }
    srv = await startCli({
      env,
      config: {
        gateway: { auth: { token: GW } },
        hooks: { enabled: true, token: HOOK },
        agents: { defaults: { heartbeat: { every: '0' }, maxConcurrent: 32 }, providers: { echo: { type: 'echo' } } },
        channels,
        delivery: { initialBackoffMs: 10, maxBackoffMs: 50 },
        logging: { level: 'trace' },
      },
    });
    // every case of every channel at once; each test then reads its own
    const ids = new Map<string, string>();
    const posts = STAND_INS.flatMap((s) =>
      (Object.keys(s.to) as Case[]).map(async (c) => {
        const r = await post(
          `${srv.url}/hooks/agent`,
          { message: MESSAGE[c], deliver: true, channel: s.name, to: s.to[c] },
          { authorization: `Bearer ${HOOK}` },
        );
        expect(r.status, r.text).toBe(202);
        ids.set(`${s.name}/${c}`, r.body.runId);
      }),
    );
    await Promise.all(posts);
    finished = whenDelivered(ids);
    // a failure is reported by the tests that wait for it
    finished.catch(() => undefined);
  });
  afterAll(async () => {
    await srv?.stop();
    for (const stub of stubs.values()) await stub.close();
    if (srv) cleanup(srv.dir);
    // every request any stand-in saw, to the end, was one its provider's spec allows
    for (const stub of stubs.values()) stub.expectClean();
  });

  describe.each(STAND_INS)('$name', (s) => {
    const done = async (c: Case) => (await finished).get(`${s.name}/${c}`)!;

    it('delivers a short reply, rendered as the channel renders it, in a request the spec allows', async () => {
      const r = await done('short');
      expect(r.reply).toContain(SHORT_REPLY);
      expect(r.delivery).toMatchObject({ status: 'sent', channel: s.name, to: s.to.short, attempts: 1 });
      const reqs = requestsTo(s, 'short');
      expect(reqs.map(s.textOf)).toEqual(partsOf(s, r.reply));
      expect(reqs).toHaveLength(1);
      expect(s.recipientOf(reqs[0]!)).toBe(s.to.short);
      expect(s.textOf(reqs[0]!)).toContain(s.short);
      expect(s.validate(reqs[0]!)).toEqual([]);
    });

    it('splits a reply of over 9,000 characters at the service’s limit and delivers the parts once each, in order', async () => {
      const r = await done('long');
      expect(r.reply).toContain(LONG);
      expect(r.delivery).toMatchObject({ status: 'sent', attempts: 1 });
      const texts = requestsTo(s, 'long').map(s.textOf);
      expect(texts).toEqual(partsOf(s, r.reply));
      expectSplit(texts, {
        limit: s.limit.limit,
        measure: s.limit.measure,
        fences: true,
        atLeast: Math.ceil(LONG.length / s.limit.limit),
        ...(s.maxLines !== undefined ? { maxLines: s.maxLines } : {}),
      });
    });

    it('waits out a rate limit for as long as the service said, then delivers', async () => {
      const r = await done('limited');
      expect(r.delivery).toMatchObject({ status: 'sent', attempts: 2 });
      const [part] = partsOf(s, r.reply);
      expect(part).toContain(s.short);
      expect(requestsTo(s, 'limited').map(s.textOf)).toEqual([part, part]);
      expect(retryWaits(r.id)).toEqual([HINT_MS]);
    });

    it('fails a delivery the service refuses after one attempt, with the service’s reason', async () => {
      const r = await done('refused');
      // the outbox keeps a reason's first 300 characters
      const kept = s.reason.length > 300 ? `${s.reason.slice(0, 299)}…` : s.reason;
      expect(r.delivery).toMatchObject({ status: 'failed', attempts: 1, reason: kept });
      expect(requestsTo(s, 'refused')).toHaveLength(1);
    });

    it('sent messages only to the four recipients, each request one the spec allows', async () => {
      await Promise.all((Object.keys(s.to) as Case[]).map(done));
      const stub = stubs.get(s.name)!;
      const recipients = stub.requests.map(s.recipientOf).filter((to) => to !== undefined);
      expect(new Set(recipients)).toEqual(new Set(Object.values(s.to)));
      stub.expectClean();
    });
  });

  it('asked for one Teams token and sent it with every activity', async () => {
    const teams = stubs.get('msteams')!;
    const activities = teams.requests.filter((r) => r.path.endsWith('/activities'));
    expect(teams.requests.length - activities.length).toBe(1);
    for (const r of activities) expect(r.headers.authorization).toBe(`Bearer ${TEAMS_ACCESS_TOKEN}`);
  });

  it('shows no channel secret, and no reply text, in its output or the read API', async () => {
    await finished;
    const runs = await api('/api/runs?limit=100');
    await api('/api/status');
    const secrets = STAND_INS.flatMap((s) => Object.values(s.secrets)).flatMap((v) => [
      v,
      encodeURIComponent(v),
      v.slice(v.indexOf(':') + 1),
    ]);
    secrets.push(TEAMS_ACCESS_TOKEN);
    const output = srv.output();
    expect(output).toContain('delivery failed');
    expectNoneOf(output, secrets);
    expectNoneOf(readApi.join('\n'), secrets);
    // the reply is the run's own record; the log never repeats it
    expectNoneOf(output, ['the report', 'Paragraph 20:', 'item 29 is done']);
    const deliveries = JSON.stringify((runs.runs as RunRecord[]).map((r) => r.delivery));
    expectNoneOf(deliveries, ['the report', 'Paragraph 20:']);
  });
});
