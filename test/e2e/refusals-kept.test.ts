/**
 * Refused hook requests in the request log (docs/http.md, "Kept requests"): status and code, headers
 * without credentials and the size; the body only when the request's credential had passed. A refusal
 * whose body was kept can be replayed once the cause is mended; one without its body cannot.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { type Service, startService } from '../../src/service.ts';
import { cleanup, get, post, tempDir, until } from '../helpers/cli.ts';
import { testConfig } from '../helpers/runtime.ts';

const HOOK = 'hook-token-0123456789abcdef0123';
const GW = 'gateway-token-0123456789abcdef01';
const SECRET = 'signing-secret-0123456789';
const MARKER = 'BODY-MARKER-7f3a9c';
const dir = tempDir('hook-intake-refusals-');
let svc: Service;
let stopped = false;

beforeAll(async () => {
  writeFileSync(join(dir, 'boom.ts'), 'export default () => { throw new Error("not yet"); };\n');
  const loaded = testConfig(
    {
      gateway: { auth: { token: GW } },
      hooks: {
        enabled: true,
        token: HOOK,
        transformsDir: dir,
        mappings: [
          { id: 'signed', match: { path: 'signed' }, action: 'wake', verify: { type: 'hmac-sha256', secret: SECRET } },
          { id: 'boom', match: { path: 'boom' }, action: 'wake', transform: { module: 'boom.ts' } },
        ],
      },
      agents: { defaults: { heartbeat: { every: '0' } } },
      storage: { driver: 'sqlite', path: join(dir, 'db.sqlite') },
    },
    dir,
  );
  svc = await startService({ load: () => loaded, initial: loaded, logger: createLogger('silent'), port: 0, watch: false });
});
afterAll(async () => {
  if (!stopped) await svc.stop();
  cleanup(dir);
});

const requests = async () => (await get(`${svc.url}/api/requests?limit=100`, GW)).body.requests as Record<string, unknown>[];

describe('refused requests in the request log', () => {
  it('keeps a bad signature with its status, code, headers and size, but neither its body nor its signature', async () => {
    const body = JSON.stringify({ note: MARKER });
    const r = await post(`${svc.url}/hooks/signed`, JSON.parse(body), { 'x-signature': 'sha256=00ff' });
    expect(r.status).toBe(401);
    const kept = await until(async () => (await requests()).find((x) => x.hook === 'signed'));
    expect(kept).toMatchObject({
      status: 401,
      reason: 'INVALID_SIGNATURE',
      mappingId: null,
      bodyBytes: Buffer.byteLength(body),
      runIds: [],
    });
    const whole = (await get(`${svc.url}/api/requests/${kept.id}`, GW)).body.request;
    expect(whole).toMatchObject({ body: '', bodyKept: false });
    expect(whole.headers).not.toHaveProperty('x-signature');
    // nothing of the body reached the store
    await svc.stop();
    stopped = true;
    for (const f of readdirSync(dir).filter((f) => f.startsWith('db.sqlite')))
      expect(readFileSync(join(dir, f)).includes(MARKER), `${f} holds the refused body`).toBe(false);
  });
});

describe('refused requests whose credential passed', () => {
  let svc2: Service;
  const dir2 = tempDir('hook-intake-refusals-2-');
  beforeAll(async () => {
    writeFileSync(join(dir2, 'boom.ts'), 'export default () => { throw new Error("not yet"); };\n');
    const loaded = testConfig(
      {
        gateway: { auth: { token: GW } },
        hooks: {
          enabled: true,
          token: HOOK,
          transformsDir: dir2,
          mappings: [{ id: 'boom', match: { path: 'boom' }, action: 'wake', transform: { module: 'boom.ts' } }],
        },
        agents: { defaults: { heartbeat: { every: '0' } } },
      },
      dir2,
    );
    svc2 = await startService({ load: () => loaded, initial: loaded, logger: createLogger('silent'), port: 0, watch: false });
  });
  afterAll(async () => {
    await svc2.stop();
    cleanup(dir2);
  });

  it('keeps a transform failure with its body, and replays it', async () => {
    const r = await post(`${svc2.url}/hooks/boom`, { n: 1 }, { authorization: `Bearer ${HOOK}` });
    expect(r.status).toBe(500);
    const list = async () => (await get(`${svc2.url}/api/requests?limit=100`, GW)).body.requests as Record<string, unknown>[];
    const kept = await until(async () => (await list()).find((x) => x.hook === 'boom'));
    expect(kept).toMatchObject({ status: 500, reason: 'TRANSFORM_FAILED', mappingId: 'boom' });
    const whole = (await get(`${svc2.url}/api/requests/${kept.id}`, GW)).body.request;
    expect(whole).toMatchObject({ body: '{"n":1}', bodyKept: true });
    // the replay runs it again (and fails again: the transform still throws)
    const replay = await post(`${svc2.url}/api/requests/${kept.id}/replay`, {}, { authorization: `Bearer ${GW}` });
    expect(replay.status).toBe(500);
  });

  it('refuses to replay a refusal whose body was not kept', async () => {
    const r = await post(`${svc2.url}/hooks/wake`, { text: 'x' }, { authorization: 'Bearer wrong-token-0123456789abcdef0' });
    expect(r.status).toBe(401);
    const list = async () => (await get(`${svc2.url}/api/requests?limit=100`, GW)).body.requests as Record<string, unknown>[];
    const kept = await until(async () => (await list()).find((x) => x.hook === 'wake' && x.status === 401));
    expect(kept.reason).toBe('UNAUTHORIZED');
    const replay = await post(`${svc2.url}/api/requests/${kept.id}/replay`, {}, { authorization: `Bearer ${GW}` });
    expect(replay).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
  });
});
