/**
 * The recipes of docs/integrations.md, each run as written: the configuration blocks are read out
 * of the page (the block after each `<!-- tested: … -->` comment), hook-intake is started on its
 * block, and the other side's block configures a stand-in built from that platform's published
 * contract. Requests then go through to the stand-in and back.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatCompletionsStandIn, type ChatCompletionsStandIn } from '../helpers/chat-completions-standin.ts';
import { cleanup, get, post, ROOT, startCli, tempDir, until, type Running } from '../helpers/cli.ts';
import { startGatewayStandIn, type GatewayStandIn } from '../helpers/gateway-standin.ts';

const DOC = readFileSync(join(ROOT, 'docs/integrations.md'), 'utf8');
const HOOK_TOKEN = 'hook-token-integrations-0123456789';

/** The json5 block right after `<!-- tested: name -->` in the page. */
function block(name: string): string {
  const marker = `<!-- tested: ${name} -->`;
  const at = DOC.indexOf(marker);
  if (at === -1) throw new Error(`docs/integrations.md has no ${marker}`);
  const m = /^\s*```json5\n([\s\S]*?)\n```/.exec(DOC.slice(at + marker.length));
  if (!m) throw new Error(`docs/integrations.md: no json5 block right after ${marker}`);
  return m[1]!;
}

/** The other side's block as that platform reads it, `${NAME}` taken from `env`. */
function otherSide(name: string, env: Record<string, string>): any {
  return JSON5.parse(
    block(name).replace(/\$\{(\w+)\}/g, (_, k: string) => {
      if (env[k] === undefined) throw new Error(`${name} names \${${k}}, which the test does not set`);
      return env[k]!;
    }),
  );
}

/** Starts hook-intake on the page's block `name`, written as a config file of its own. */
function serve(name: string, env: Record<string, string>, dir = tempDir()): Promise<Running> {
  return startCli({ configText: block(name), configName: 'hook-intake.json5', dir, env });
}

const hook = (srv: Running, path: string, body: unknown, headers: Record<string, string> = {}) =>
  post(`${srv.url}/hooks/${path}`, body, { authorization: `Bearer ${HOOK_TOKEN}`, ...headers });

/** The run once it has finished, through the read API (its token is the one `serve` generated). */
async function finished(srv: Running, runId: string): Promise<any> {
  const token = readFileSync(join(srv.dataDir, 'gateway-token'), 'utf8').trim();
  return until(async () => {
    const r = (await get(`${srv.url}/api/runs/${runId}`, token)).body.run;
    return r.status !== 'queued' && r.status !== 'running' ? r : undefined;
  });
}

describe('In front of a gateway: the gateway provider', () => {
  const env: Record<string, string> = { HOOK_TOKEN, GATEWAY_HOOKS_TOKEN: 'gw-hooks-token-integrations-0123456789' };
  let gw: GatewayStandIn;
  let srv: Running;
  beforeAll(async () => {
    const hooks = otherSide('gateway/gateway', env).hooks;
    expect(hooks.enabled).toBe(true);
    gw = await startGatewayStandIn(hooks);
    env.GATEWAY_URL = gw.stub.url;
    srv = await serve('gateway/hook-intake', env);
  });
  afterAll(async () => {
    await srv?.stop();
    await gw?.close();
    if (srv) cleanup(srv.dir);
  });

  it("forwards an agent request to the gateway's /hooks/agent once, and the run shows the gateway's run id", async () => {
    const first = await hook(srv, 'agent', { message: 'Deploy of app finished', name: 'CI' }, { 'idempotency-key': 'deploy-1' });
    expect(first.status, first.text).toBe(202);
    const again = await hook(srv, 'agent', { message: 'Deploy of app finished', name: 'CI' }, { 'idempotency-key': 'deploy-1' });
    expect(again.body.runId).toBe(first.body.runId);
    const run = await finished(srv, first.body.runId);
    expect(run).toMatchObject({ status: 'ok', reply: null, delivery: { status: 'skipped', reason: 'forwarded' } });
    expect(gw.runs).toHaveLength(1);
    expect(run.forwarded).toEqual({ runId: gw.runs[0]!.runId });
    const sent = gw.runs[0]!.body;
    expect(Object.keys(sent).sort()).toEqual(['deliver', 'message', 'name', 'sessionKey', 'timeoutSeconds', 'wakeMode']);
    expect(sent).toMatchObject({ name: 'CI', sessionKey: first.body.sessionKey, wakeMode: 'now', deliver: true, timeoutSeconds: 600 });
    // the message goes in its safety boundary
    expect(sent.message).toMatch(/<<<EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]+" source="Webhook">>>\nDeploy of app finished\n/);
    expect(gw.stub.requests[0]!.headers['idempotency-key']).toBe(first.body.runId);
  });

  it("hands a wake to the gateway's /hooks/wake through the heartbeat", async () => {
    const wake = await hook(srv, 'wake', { text: 'Disk almost full on db-1', mode: 'now' });
    expect(wake.status, wake.text).toBe(200);
    const taken = await until(() => gw.wakes.find((w) => String(w.text).includes('Disk almost full on db-1')));
    expect(taken.mode).toBe('now');
  });

  it("never shows the gateway's token", async () => {
    expect(srv.output()).not.toContain(env.GATEWAY_HOOKS_TOKEN);
  });
});

describe("The gateway's OpenAI-compatible endpoint: the openai provider", () => {
  const env: Record<string, string> = { HOOK_TOKEN, GATEWAY_AUTH_TOKEN: 'gw-auth-token-integrations-0123456789' };
  let endpoint: ChatCompletionsStandIn;
  let srv: Running;
  beforeAll(async () => {
    const gateway = otherSide('openai/gateway', env).gateway;
    endpoint = await startChatCompletionsStandIn({
      token: gateway.auth.token,
      enabled: gateway.http.endpoints.chatCompletions.enabled === true,
      reply: (body) => `Agent reply after ${body.messages.length} messages.`,
    });
    env.GATEWAY_URL = endpoint.url;
    srv = await serve('openai/hook-intake', env);
  });
  afterAll(async () => {
    await srv?.stop();
    await endpoint?.close();
    if (srv) cleanup(srv.dir);
  });

  it("asks the gateway's agent, delivers its reply, and sends the transcript on the next turn", async () => {
    const one = await hook(srv, 'agent', { message: 'Invoice 42 is overdue', sessionKey: 'hook:billing' });
    expect(one.status, one.text).toBe(202);
    expect(await finished(srv, one.body.runId)).toMatchObject({ status: 'ok', reply: 'Agent reply after 1 messages.' });
    const two = await hook(srv, 'agent', { message: 'It is paid now', sessionKey: 'hook:billing' });
    expect(await finished(srv, two.body.runId)).toMatchObject({ status: 'ok', reply: 'Agent reply after 3 messages.' });
    expect(endpoint.accepted.map((a) => a.agentId)).toEqual(['main', 'main']);
    expect(endpoint.accepted[1]!.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    await srv.waitFor('Agent reply after 3 messages.');
    expect(srv.output()).not.toContain(env.GATEWAY_AUTH_TOKEN);
  });
});

describe('A local agent CLI: the command provider', () => {
  const dir = tempDir();
  const log = join(dir, 'claude-calls.jsonl');
  let srv: Running;
  beforeAll(async () => {
    // `claude` first on the service's PATH: the stand-in, run by this Node
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    const standIn = join(ROOT, 'test/fixtures/claude-standin.mjs');
    writeFileSync(join(bin, 'claude'), `#!/bin/sh\nexec "${process.execPath}" "${standIn}" "$@"\n`);
    chmodSync(join(bin, 'claude'), 0o755);
    mkdirSync(join(dir, 'agent'));
    srv = await serve('command/hook-intake', { HOOK_TOKEN, PATH: `${bin}:${process.env.PATH}`, CLAUDE_STANDIN_LOG: log }, dir);
  });
  afterAll(async () => {
    await srv?.stop();
    cleanup(dir);
  });

  it('runs the CLI in print mode with the model, the request on standard input, and the earlier turns on the next', async () => {
    const one = await hook(srv, 'agent', { message: 'Ticket 7: the login page is blank', sessionKey: 'hook:ticket-7' });
    expect(one.status, one.text).toBe(202);
    const first = await finished(srv, one.body.runId);
    expect(first).toMatchObject({ status: 'ok', reply: expect.stringMatching(/^Handled by sonnet: \d+ characters read\.$/) });
    const two = await hook(srv, 'agent', { message: 'Ticket 7: fixed by clearing the cache?', sessionKey: 'hook:ticket-7' });
    expect(await finished(srv, two.body.runId)).toMatchObject({ status: 'ok' });
    await srv.waitFor(first.reply);
    expect(existsSync(log)).toBe(true);
    const calls = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(calls).toHaveLength(2);
    expect(calls[0].args).toEqual(['-p', '--model', 'sonnet', '--output-format', 'text', 'Act on the request on standard input.']);
    expect(calls[0].cwd).toMatch(/\/agent$/);
    expect(calls[0].stdin).toMatch(/<<<EXTERNAL_UNTRUSTED_CONTENT[^\n]*>>>\nTicket 7: the login page is blank\n/);
    expect(calls[1].stdin).toMatch(
      /^The conversation so far, oldest first:[\s\S]*login page is blank[\s\S]*Handled by sonnet[\s\S]*The new message:[\s\S]*clearing the cache/,
    );
  });
});
