/**
 * Token usage end to end (docs/runtime.md, "Token usage"): a run of an `ops` agent served by the
 * `anthropic` provider against the Messages API stand-in (its instructions sent as `system`), and one of
 * the default `triage` agent on `echo`, on a service over SQLite and one over Redis. Each run shows the
 * usage its provider reported in `GET /api/runs/<id>` and the list, and `/metrics` counts it by agent,
 * model and direction (test/http/openapi/document.test.ts checks such
 * answers against the OpenAPI document).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type Service } from '../../src/service.ts';
import { startAnthropicStandIn, type AnthropicStandIn } from '../helpers/anthropic-stand-in.ts';
import { cleanup, post, tempDir, until } from '../helpers/cli.ts';
import { redisSuite, startRedis, type RedisServer } from '../helpers/redis-server.ts';
import { captureLogger, testConfig } from '../helpers/runtime.ts';

const HOOK = 'hk_usage-test-token-0123456789abcdef';
const GW = 'gw_usage-test-token-0123456789abcdef';
const KEY = 'sk-ant-api03-usage-test-key-0123456789abcdef';

interface RunAnswer {
  id: string;
  status: string;
  message: string;
  usage: { inputTokens: number; outputTokens: number } | null;
}

/** `storage` gives the storage config when the suite starts (none: SQLite in the config's directory). */
function usageSuite(storage: () => Record<string, unknown> | undefined) {
  let api: AnthropicStandIn;
  let svc: Service;
  const dir = tempDir('hook-intake-usage-');
  const read = async (path: string) => (await fetch(`${svc.url}${path}`, { headers: { authorization: `Bearer ${GW}` } })).text();
  const runOf = async (id: string) =>
    until(async () => {
      const { run } = JSON.parse(await read(`/api/runs/${id}`)) as { run: RunAnswer };
      return run.status === 'ok' ? run : undefined;
    });
  const agent = async (body: Record<string, unknown>) => {
    const r = await post(
      `${svc.url}/hooks/agent`,
      { deliver: false, wakeMode: 'next-heartbeat', ...body },
      { authorization: `Bearer ${HOOK}` },
    );
    expect(r.status).toBe(202);
    return (r.body as { runId: string }).runId;
  };

  beforeAll(async () => {
    api = await startAnthropicStandIn(KEY);
    const store = storage();
    const raw = {
      ...(store ? { storage: store } : {}),
      gateway: { auth: { token: GW } },
      hooks: { enabled: true, token: HOOK },
      agents: {
        defaults: { heartbeat: { every: '0' } },
        providers: { echo: { type: 'echo' }, claude: { type: 'anthropic', apiKey: KEY, baseUrl: api.url } },
        list: [
          { id: 'triage', default: true, model: 'echo/echo' },
          { id: 'ops', model: 'claude/claude-haiku-5-5', instructions: 'You are the on-call engineer.' },
        ],
      },
    };
    svc = await startService({
      load: () => testConfig(raw, dir),
      logger: captureLogger('warn').logger,
      port: 0,
      bind: '127.0.0.1',
      watch: false,
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await api?.close();
    cleanup(dir);
  });

  it('stores what each provider reported with its run, shows it in the API, and counts it on /metrics', async () => {
    api.script({
      reply: 'Noted.',
      usage: { input_tokens: 900, output_tokens: 40, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000 },
    });
    const claudeRun = await runOf(await agent({ message: 'Build 42 failed', agentId: 'ops' }));
    const echoRun = await runOf(await agent({ message: 'Disk at 91%' }));
    expect(api.problems.flat()).toEqual([]);
    expect(api.requests[0]!.json.system).toBe('You are the on-call engineer.');
    // the cache tokens count as input; echo's estimate is a quarter of the prompt's length, both ways
    expect(claudeRun.usage).toEqual({ inputTokens: 3000, outputTokens: 40 });
    const estimate = Math.ceil(echoRun.message.length / 4);
    expect(echoRun.usage).toEqual({ inputTokens: estimate, outputTokens: estimate });
    const { runs } = JSON.parse(await read('/api/runs')) as { runs: RunAnswer[] };
    expect(Object.fromEntries(runs.map((r) => [r.id, r.usage]))).toEqual({ [claudeRun.id]: claudeRun.usage, [echoRun.id]: echoRun.usage });

    const metrics = await until(async () => {
      const t = await read('/metrics');
      return t.includes('model="echo/echo",direction="output"') ? t : undefined;
    });
    for (const line of [
      'hook_intake_tokens_total{agent="ops",model="claude/claude-haiku-5-5",direction="input"} 3000',
      'hook_intake_tokens_total{agent="ops",model="claude/claude-haiku-5-5",direction="output"} 40',
      `hook_intake_tokens_total{agent="triage",model="echo/echo",direction="input"} ${estimate}`,
      `hook_intake_tokens_total{agent="triage",model="echo/echo",direction="output"} ${estimate}`,
    ])
      expect(metrics).toContain(line);
    expect(metrics).not.toContain(KEY);
  });
}

describe('token usage on SQLite', () => {
  usageSuite(() => undefined);
});

redisSuite('token usage on Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());
  usageSuite(() => ({ driver: 'redis', url: redis.url }));
});
