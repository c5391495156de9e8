/**
 * The minimal channel of docs/plugins.md, used as a third party would use it: the block copied from
 * the page into a temporary directory, named under `plugins`, and the real service delivering an
 * agent's reply through it to a receiver over HTTP.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, get, post, ROOT, startCli, tempDir, until, type Running } from '../helpers/cli.ts';
import { json, startStub, type HttpStub } from '../helpers/http-stub.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const PAGER_TOKEN = `pg_${randomBytes(18).toString('hex')}`;
const MARKER = '<!-- the block below is loaded by test/plugin-api/third-party.test.ts -->';
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

/** The TypeScript block that follows the marker in docs/plugins.md. */
function documentedChannel(): string {
  const page = readFileSync(join(ROOT, 'docs', 'plugins.md'), 'utf8');
  const at = page.indexOf(MARKER);
  const block = at < 0 ? null : /```ts\n([\s\S]*?)\n```/.exec(page.slice(at));
  if (!block) throw new Error(`docs/plugins.md: no \`\`\`ts block after "${MARKER}"`);
  return block[1]!;
}

describe('the minimal channel of docs/plugins.md', () => {
  let receiver: HttpStub;
  let srv: Running;
  const flaky = new Set<string>();
  beforeAll(async () => {
    receiver = await startStub((req, res) => {
      const group = String(req.json.group);
      if (group === 'nowhere') return json(res, 404, { error: { message: 'unknown group' } });
      if (group.startsWith('flaky') && !flaky.has(group)) {
        flaky.add(group);
        return json(res, 503, { error: { message: 'maintenance' } });
      }
      json(res, 200, { ok: true });
    });
    const dir = tempDir();
    writeFileSync(join(dir, 'pager.ts'), documentedChannel());
    srv = await startCli({
      dir,
      env: { PAGER_TOKEN },
      config: {
        gateway: { auth: { token: GW } },
        hooks: { enabled: true, token: HOOK },
        plugins: ['./pager.ts'],
        agents: { defaults: { heartbeat: { every: '0' } }, providers: { echo: { type: 'echo' } } },
        channels: { pager: { url: `${receiver.url}/api/messages`, token: '${PAGER_TOKEN}' } },
        delivery: { initialBackoffMs: 10 },
      },
    });
  });
  afterAll(async () => {
    await srv?.stop();
    if (srv) cleanup(srv.dir);
    await receiver?.close();
  });

  const ask = (to: string, message: string) =>
    post(`${srv.url}/hooks/agent`, { message, channel: 'pager', to }, { authorization: `Bearer ${HOOK}` });
  const settled = (runId: string) =>
    until(async () => {
      const run = (await get(`${srv.url}/api/runs/${runId}`, GW)).body.run;
      return ['sent', 'failed', 'skipped'].includes(run?.delivery.status) ? run : undefined;
    });

  it('delivers the reply as plain text, with its token and the service User-Agent', async () => {
    const r = await ask('ops', 'disk **full** on db-1');
    expect(r.status).toBe(202);
    const run = await settled(r.body.runId);
    expect(run.delivery).toMatchObject({ status: 'sent', channel: 'pager', to: 'ops', attempts: 1 });
    const sent = receiver.requests.filter((q) => q.json.group === 'ops');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe('/api/messages');
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${PAGER_TOKEN}`);
    expect(sent[0]!.headers['user-agent']).toBe(`hook-intake/${version}`);
    expect(sent[0]!.json.text).toContain('disk full on db-1');
    expect(sent[0]!.json.id).toMatch(/\/1$/);
  });

  it("refuses a recipient its checkTo refuses, at intake, naming `to` and the channel's phrase", async () => {
    const r = await ask('Ops Team', 'hello');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ ok: false, field: 'to' });
    expect(r.body.error).toContain('a pager group (ops, on-call-2)');
  });

  it('retries a 503 and records a 404 as failed at once, its reason without the token', async () => {
    const retried = await settled((await ask('flaky-1', 'first')).body.runId);
    expect(retried.delivery).toMatchObject({ status: 'sent', attempts: 2 });
    const refused = await settled((await ask('nowhere', 'second')).body.runId);
    expect(refused.delivery).toMatchObject({ status: 'failed', attempts: 1, reason: 'no pager group "nowhere"' });
    expect(receiver.requests.filter((q) => q.json.group === 'nowhere')).toHaveLength(1);
    expect(JSON.stringify(refused)).not.toContain(PAGER_TOKEN);
  });
});
