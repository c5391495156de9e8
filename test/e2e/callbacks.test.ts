/**
 * Callbacks through the whole service on SQLite (docs/callbacks.md): hook requests become runs whose
 * outcome sends signed events to a receiver that verifies them with the standardwebhooks library; a
 * mapping names callbacks for its own runs; a refused signature or token sends `request.rejected`
 * without the request; a callback on 127.0.0.1 without `allowPrivateNetwork` fails with the reason,
 * which `GET /api/runs/<id>` shows. The service runs in this process (`startService()`), over real sockets.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { startService } from '../../src/service.ts';
import { callbackSecret, startCallbackReceiver } from '../helpers/callback-receiver.ts';
import { cleanup, get, post, tempDir, until } from '../helpers/cli.ts';
import type { ProviderStub, StubRequest } from '../helpers/provider-stub.ts';
import { testConfig } from '../helpers/runtime.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const GITHUB_SECRET = `gh_${randomBytes(12).toString('hex')}`;
const secret = callbackSecret(3);
const auth = { authorization: `Bearer ${HOOK}` };

describe('callbacks end to end', () => {
  let dir: string;
  let receiver: ProviderStub;
  let srv: Awaited<ReturnType<typeof startService>>;
  /** The events the receiver got of `type`. */
  const events = (type: string): StubRequest[] => receiver.requests.filter((r) => r.body?.type === type);
  const run = async (id: string) => (await get(`${srv.url}/api/runs/${id}`, GW)).body;

  beforeAll(async () => {
    dir = tempDir('hook-intake-callbacks-');
    receiver = await startCallbackReceiver(secret);
    const url = `${receiver.url}/events`;
    const config = {
      gateway: { auth: { token: GW } },
      hooks: {
        enabled: true,
        token: HOOK,
        replyInResponse: true,
        mappings: [
          { id: 'deploys', match: { path: 'deploys' }, messageTemplate: 'deploy {{service}}', deliver: false, callbacks: ['ci'] },
          { id: 'github', match: { path: 'github' }, messageTemplate: 'x', verify: { type: 'github', secret: GITHUB_SECRET } },
        ],
      },
      agents: { defaults: { heartbeat: { every: '0' } } },
      callbacks: [
        { id: 'all', url, secret, types: ['run.completed', 'run.failed'], hooks: ['agent'], allowPrivateNetwork: true },
        { id: 'ci', url, secret, types: ['run.completed'], hooks: [], allowPrivateNetwork: true },
        { id: 'audit', url, secret, types: ['request.rejected'], allowPrivateNetwork: true },
        { id: 'local', url, secret, types: ['run.completed'], hooks: ['agent'] },
      ],
    };
    srv = await startService({
      load: () => testConfig(config, dir),
      logger: createLogger('silent'),
      port: 0,
      bind: '127.0.0.1',
      watch: false,
    });
  });
  afterAll(async () => {
    await srv?.stop();
    await receiver?.close();
    cleanup(dir);
  });

  it('sends run.completed of an agent run, signed, with the run, the reply where allowed and the same id as the API shows', async () => {
    const answer = await post(`${srv.url}/hooks/agent`, { message: 'status?', deliver: false, sessionKey: 'hook:ops' }, auth);
    expect(answer.status).toBe(202);
    const { runId } = answer.body;
    const got = await until(() => events('run.completed').find((r) => r.body.data.runId === runId));
    expect(got.body.data).toEqual({
      runId,
      hook: 'agent',
      agentId: 'main',
      sessionKey: 'hook:ops',
      status: 'ok',
      replyDisposition: 'silent',
      delivery: { status: 'skipped', reason: 'deliver is false', channel: null, to: null, attempts: 0 },
      reply: expect.stringContaining('status?'),
    });
    receiver.expectClean();
    const shown = await until(async () => {
      const r = await run(runId);
      return r.callbacks.length === 2 && r.callbacks.every((c: { status: string }) => c.status !== 'pending') ? r : undefined;
    });
    expect(shown.run.hookId).toBe('agent');
    expect(shown.callbacks).toEqual([
      expect.objectContaining({ id: got.headers['webhook-id'], callback: 'all', type: 'run.completed', status: 'sent', attempts: 1 }),
      // a callback on 127.0.0.1 without allowPrivateNetwork: refused, the reason on its entry
      expect.objectContaining({
        callback: 'local',
        status: 'failed',
        attempts: 1,
        lastError: 'refused: 127.0.0.1, a loopback address (set allowPrivateNetwork to allow it)',
        nextAttemptAt: null,
      }),
    ]);
  });

  it("sends a mapping's runs to the callbacks it names, and no other hook's", async () => {
    const answer = await post(`${srv.url}/hooks/deploys`, { service: 'billing' }, auth);
    expect(answer.status).toBe(202);
    const got = await until(() => events('run.completed').find((r) => r.body.data.runId === answer.body.runId));
    expect(got.body.data).toMatchObject({ hook: 'deploys', status: 'ok' });
    expect((await run(answer.body.runId)).callbacks.map((c: { callback: string }) => c.callback)).toEqual(['ci']);
    // ci takes no hook by itself: the agent run above sent it nothing
    expect(receiver.requests.filter((r) => r.body.data.hook === 'agent').length).toBe(1);
  });

  it('sends request.rejected for a bad signature and a wrong token, without the request; an unknown path sends none', async () => {
    const body = JSON.stringify({ zen: 'ping', marker: 'body-marker-0123' });
    const bad = await fetch(`${srv.url}/hooks/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': 'ping', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` },
      body,
    });
    expect(bad.status).toBe(401);
    const signature = await until(() => events('request.rejected').find((r) => r.body.data.hook === 'github'));
    expect(signature.body.data).toEqual({ hook: 'github', status: 401, code: 'INVALID_SIGNATURE', notReported: 0 });
    expect(signature.raw.toString()).not.toContain('body-marker');
    expect(signature.raw.toString()).not.toContain('127.0.0.1');

    // a callback's events go one at a time, in the order stored: had the first made one, it would come first
    expect((await post(`${srv.url}/hooks/nowhere`, { message: 'x' }, { authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await post(`${srv.url}/hooks/agent`, { message: 'x' }, { authorization: 'Bearer wrong' })).status).toBe(401);
    const token = await until(() => events('request.rejected').find((r) => r.body.data.hook === 'agent'));
    expect(token.body.data).toEqual({ hook: 'agent', status: 401, code: 'UNAUTHORIZED', notReported: 0 });
    expect(events('request.rejected').map((r) => r.body.data.hook)).toEqual(['github', 'agent']);
    receiver.expectClean();
  });
});
