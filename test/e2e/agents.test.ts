/**
 * Several agents behind the hooks (docs/agents.md): a request or mapping picks one with `agentId`,
 * whose defaults (model, instructions, timeout) its run takes; `hooks.allowedAgentIds` limits which may
 * be named; an isolated session starts each run with no transcript; a mapping's `action: "deliver"`
 * sends its message with no model call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinPlugins } from '../../plugins/index.ts';
import { createLogger } from '../../src/log.ts';
import { definePlugin } from '../../src/plugins/define.ts';
import { type Service, startService } from '../../src/service.ts';
import { cleanup, get, post, tempDir, until } from '../helpers/cli.ts';
import { scriptedProvider, testConfig } from '../helpers/runtime.ts';

const HOOK = 'hook-token-0123456789abcdef0123';
const GW = 'gateway-token-0123456789abcdef01';
const auth = { authorization: `Bearer ${HOOK}` };
const dir = tempDir('hook-intake-agents-');
const provider = scriptedProvider((req) => `reply to ${req.messages.at(-1)!.content.length} chars`);
const sent: { to: string | null; text: string }[] = [];
const recording = definePlugin({
  name: 'agents-test',
  channels: { recording: { create: () => ({ send: async (m) => void sent.push({ to: m.to, text: m.text }) }) } },
});
let svc: Service;

beforeAll(async () => {
  const loaded = testConfig(
    {
      gateway: { auth: { token: GW } },
      hooks: {
        enabled: true,
        token: HOOK,
        allowedAgentIds: ['triage', 'ops'],
        mappings: [
          { id: 'to-ops', match: { path: 'to-ops' }, agentId: 'ops', messageTemplate: 'page: {{what}}' },
          { id: 'by-payload', match: { path: 'by-payload' }, agentId: '{{agent}}', messageTemplate: 'x' },
          {
            id: 'notice',
            match: { path: 'notice' },
            action: 'deliver',
            channel: 'rec',
            to: 'room-1',
            messageTemplate: 'Deploy {{version}} is out',
          },
        ],
      },
      agents: {
        defaults: { heartbeat: { every: '0' } },
        providers: { echo: { type: 'echo' }, sp: { type: 'scripted' } },
        list: [
          { id: 'triage', model: 'sp/fast', instructions: 'Be brief.', default: true },
          { id: 'ops', model: 'sp/slow', models: ['sp/slow', 'sp/big'], timeoutSeconds: 30 },
          { id: 'secret-agent', model: 'sp/fast' },
        ],
      },
      channels: { console: {}, rec: { type: 'recording' } },
    },
    dir,
  );
  svc = await startService({
    load: () => loaded,
    initial: loaded,
    logger: createLogger('silent'),
    port: 0,
    watch: false,
    builtins: [...builtinPlugins, provider.plugin, recording],
  });
});
afterAll(async () => {
  await svc.stop();
  cleanup(dir);
});

const run = async (id: string) =>
  until(
    async () =>
      (await get(`${svc.url}/api/runs/${id}`, GW)).body.run?.status === 'ok' && (await get(`${svc.url}/api/runs/${id}`, GW)).body.run,
  );

describe('several agents', () => {
  it('runs a request on the default agent, with its model and instructions', async () => {
    const r = await post(`${svc.url}/hooks/agent`, { message: 'hello' }, auth);
    expect(r.status).toBe(202);
    const done = await run(r.body.runId);
    expect(done).toMatchObject({ agentId: 'triage', model: 'sp/fast', sessionMode: 'persistent' });
    const call = provider.calls.find((c) => c.req.runId === r.body.runId)!;
    expect(call.req).toMatchObject({ model: 'fast', instructions: 'Be brief.' });
  });

  it('runs on the agent a request or mapping names, with its own defaults', async () => {
    const r = await post(`${svc.url}/hooks/agent`, { message: 'disk full', agentId: 'ops' }, auth);
    const done = await run(r.body.runId);
    expect(done).toMatchObject({ agentId: 'ops', model: 'sp/slow', timeoutSeconds: 30 });
    expect(provider.calls.find((c) => c.req.runId === r.body.runId)!.req.instructions).toBeNull();
    const mapped = await post(`${svc.url}/hooks/to-ops`, { what: 'db down' }, auth);
    expect(await run(mapped.body.runId)).toMatchObject({ agentId: 'ops' });
  });

  it('refuses an unknown agent, one hooks may not name, and a model the agent may not use: 400, nothing stored', async () => {
    // heartbeats come and go (the runs ask for one): count the hooks' runs
    const hookRuns = async () =>
      ((await get(`${svc.url}/api/runs?limit=1000`, GW)).body.runs as { kind: string }[]).filter((r) => r.kind !== 'heartbeat').length;
    const before = await hookRuns();
    for (const [body, message] of [
      [{ message: 'm', agentId: 'nobody' }, 'agentId: names no agent; agents: triage, ops, secret-agent'],
      [{ message: 'm', agentId: 'secret-agent' }, 'agentId: names an agent hooks may not choose; allowed: triage, ops'],
      [{ message: 'm', agentId: 'ops', model: 'sp/fast' }, 'model: is not one of the models of agent "ops"'],
    ] as const) {
      const r = await post(`${svc.url}/hooks/agent`, body, auth);
      expect(r).toMatchObject({ status: 400, body: { field: message.split(':')[0], error: message } });
    }
    const templated = await post(`${svc.url}/hooks/by-payload`, { agent: 'secret-agent' }, auth);
    expect(templated).toMatchObject({ status: 400, body: { field: 'agentId' } });
    expect(await hookRuns()).toBe(before);
  });
});

describe('session mode', () => {
  it('continues a persistent session, and starts each isolated run with no transcript', async () => {
    const first = await post(`${svc.url}/hooks/agent`, { message: 'one', sessionKey: 'hook:iso-1' }, auth);
    await run(first.body.runId);
    const persistent = await post(`${svc.url}/hooks/agent`, { message: 'two', sessionKey: 'hook:iso-1' }, auth);
    await run(persistent.body.runId);
    const isolated = await post(`${svc.url}/hooks/agent`, { message: 'three', sessionKey: 'hook:iso-1', sessionMode: 'isolated' }, auth);
    expect(await run(isolated.body.runId)).toMatchObject({ sessionMode: 'isolated' });
    const messagesOf = (id: string) => provider.calls.find((c) => c.req.runId === id)!.req.messages.length;
    expect(messagesOf(persistent.body.runId)).toBe(3);
    expect(messagesOf(isolated.body.runId)).toBe(1);
  });
});

describe('deliver without a model', () => {
  it('sends the rendered message to its channel as it is: no model call, no summary in the main session', async () => {
    const r = await post(`${svc.url}/hooks/notice`, { version: 'v1.2.3' }, auth);
    expect(r.status).toBe(202);
    const done = await until(async () => {
      const x = (await get(`${svc.url}/api/runs/${r.body.runId}`, GW)).body.run;
      return x?.delivery.status === 'sent' && x;
    });
    expect(done).toMatchObject({
      kind: 'deliver',
      agentId: null,
      model: '',
      reply: 'Deploy v1.2.3 is out',
      message: 'Deploy v1.2.3 is out',
    });
    expect(sent.at(-1)).toEqual({ to: 'room-1', text: 'Deploy v1.2.3 is out' });
    expect(provider.calls.some((c) => c.req.runId === r.body.runId)).toBe(false);
    const events = (await get(`${svc.url}/api/main/events?limit=1000`, GW)).body.events as { runId: string | null }[];
    expect(events.some((e) => e.runId === r.body.runId)).toBe(false);
  });
});
