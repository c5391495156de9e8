/**
 * The intake pipeline driven directly, with a fake store that records what each request commits:
 * credential → idempotency → rate limit → resolve → keep → dispatch, and what each adapter's options
 * change (docs/development.md, "The intake pipeline").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinPlugins } from '../../plugins/index.ts';
import { buildGeneration } from '../../src/generation/build.ts';
import type { Generation } from '../../src/generation/types.ts';
import { ownerWithoutCredential } from '../../src/intake/credential.ts';
import { createDispatcher } from '../../src/intake/dispatch.ts';
import { IdempotencyGuard } from '../../src/intake/idempotency.ts';
import { Intake } from '../../src/intake/pipeline.ts';
import { createRateLimiter } from '../../src/intake/rate-limit.ts';
import type { HookRequest } from '../../src/intake/request.ts';
import { LocalCounters } from '../../src/store/local/counters.ts';
import type { AcceptRecords, IdempotencyRecords } from '../../src/store/roles.ts';
import type { AcceptBatch, IdempotencyRecord } from '../../src/store/types.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';
import { captureLogger, testConfig } from '../helpers/runtime.ts';

const NOW = Date.parse('2026-11-29T10:00:00Z');
const dir = tempDir('hook-intake-pipeline-');
const { logger } = captureLogger('silent');

/** Records that keep each commit in memory: the two roles the pipeline uses, accepting and reading idempotency records. */
function fakeRecords() {
  const commits: AcceptBatch[] = [];
  const keys = new Map<string, IdempotencyRecord>();
  const records: AcceptRecords & IdempotencyRecords = {
    async accept(batch: AcceptBatch) {
      commits.push(batch);
      if (batch.idempotency) keys.set(batch.idempotency.key, batch.idempotency);
      return batch.request ? { requestId: `req-${commits.length}` } : {};
    },
    async getIdempotency(key: string) {
      return keys.get(key);
    },
    async pruneIdempotency() {
      return 0;
    },
  };
  return { records, commits };
}

function pipeline() {
  const { records, commits } = fakeRecords();
  const accepted = { runs: 0, heartbeats: 0 };
  const dispatcher = createDispatcher({
    records,
    clock: () => NOW,
    runsAccepted: () => accepted.runs++,
    queuedRuns: () => 0,
    requestHeartbeat: () => accepted.heartbeats++,
  });
  const intake = new Intake({
    dispatcher,
    idempotency: new IdempotencyGuard(records),
    rateLimiter: createRateLimiter(new LocalCounters()),
    logger,
  });
  return { intake, commits, accepted };
}

const request = (name: string, payload: unknown, over: Partial<HookRequest> = {}): HookRequest => ({
  name,
  payload,
  headers: { 'content-type': 'application/json', 'x-github-event': 'issues', authorization: 'Bearer secret-token' },
  query: {},
  path: `/hooks/${name}`,
  url: `/hooks/${name}`,
  rawBody: Buffer.from(JSON.stringify(payload)),
  json: JSON.stringify(payload),
  receivedAt: NOW,
  authenticated: true,
  ...over,
});

let gen: Generation;
let unkept: Generation;

beforeAll(async () => {
  const config = (retention: Record<string, unknown>) =>
    testConfig(
      {
        hooks: {
          enabled: true,
          token: 'hook-token-0123456789abcdef0123',
          transformsDir: dir,
          mappings: [
            { id: 'issues', match: { path: 'github' }, name: 'GitHub', messageTemplate: 'issue {{action}}', sessionKey: 'gh:{{number}}' },
            { id: 'each', match: { path: 'batch' }, action: 'wake', forEach: 'items', textTemplate: 'item {{items[0].n}}' },
            { id: 'limited', match: { path: 'limited' }, action: 'wake', textTemplate: 'hi', rateLimit: { max: 1, perSeconds: 60 } },
            {
              id: 'acme',
              match: { path: 'acme' },
              messageTemplate: '{{note}}',
              event: '{{headers.x-acme-event}}',
              events: ['order.paid'],
              idempotencyKey: '{{id}}',
              maxChars: 100,
            },
          ],
        },
        retention,
      },
      dir,
    );
  gen = await buildGeneration(config({}), { builtins: builtinPlugins, logger });
  unkept = await buildGeneration(config({ requestsDays: 0 }), { builtins: builtinPlugins, logger });
});
afterAll(async () => {
  await gen.dispose();
  await unkept.dispose();
  cleanup(dir);
});

describe('the intake pipeline', () => {
  it('stores a wake with its kept request in one commit, and asks for a heartbeat', async () => {
    const { intake, commits, accepted } = pipeline();
    const req = request('wake', { text: 'deploy finished' });
    const answer = await intake.accept(gen, req, intake.authorize(gen, req));
    expect(answer).toMatchObject({ status: 200, body: { ok: true, mode: 'now' }, requestId: 'req-1' });
    expect(commits).toHaveLength(1);
    const [batch] = commits;
    expect(batch!.events).toHaveLength(1);
    expect(batch!.events[0]!.text).toContain('deploy finished');
    expect(batch!.events[0]!.id).toBe(answer.body.eventId);
    expect(batch!.request).toMatchObject({ hook: 'wake', mappingId: null, status: 200, replayOf: null });
    // the credential never reaches the request log
    expect(batch!.request!.headers).not.toHaveProperty('authorization');
    expect(accepted).toEqual({ runs: 0, heartbeats: 1 });
  });

  it('runs a named hook through its mapping and stores the run, the mapping named on the kept request', async () => {
    const { intake, commits, accepted } = pipeline();
    const req = request('github', { action: 'opened', number: 7 });
    const owner = intake.authorize(gen, req);
    expect(owner?.id).toBe('issues');
    const answer = await intake.accept(gen, req, owner);
    expect(answer).toMatchObject({ status: 202, body: { ok: true, sessionKey: 'gh:7' } });
    const [batch] = commits;
    expect(batch!.runs).toHaveLength(1);
    expect(batch!.runs[0]).toMatchObject({ id: answer.body.runId, hookName: 'GitHub', sessionKey: 'gh:7' });
    expect(batch!.runs[0]!.message).toContain('issue opened');
    expect(batch!.request).toMatchObject({ hook: 'github', mappingId: 'issues', actions: [{ kind: 'agent', runId: answer.body.runId }] });
    expect(accepted.runs).toBe(1);
  });

  it('refuses a request whose credential fails before anything is read or stored', () => {
    const { intake, commits } = pipeline();
    for (const name of ['wake', 'github']) {
      expect(() => intake.authorize(gen, request(name, {}, { authenticated: false }))).toThrow(expect.objectContaining({ status: 401 }));
    }
    expect(commits).toEqual([]);
  });

  it('answers a repeat of an idempotency key with the first answer, scoped to its hook, storing nothing more', async () => {
    const { intake, commits } = pipeline();
    const headers = { 'content-type': 'application/json', 'idempotency-key': 'k-1' };
    const wake = request('wake', { text: 'once' }, { headers });
    const first = await intake.accept(gen, wake, undefined);
    const again = await intake.accept(gen, request('wake', { text: 'once' }, { headers }), undefined);
    expect(again).toEqual({ status: 200, body: { ...first.body, duplicate: true } });
    expect(commits).toHaveLength(1);
    expect(commits[0]!.idempotency).toMatchObject({ key: 'wake\nk-1', status: 200 });
    // the same key on another hook is another request
    const agent = request('agent', { message: 'hi' }, { headers });
    expect((await intake.accept(gen, agent, undefined)).body.duplicate).toBeUndefined();
    expect(commits).toHaveLength(2);
  });

  it('keeps a request its mapping skips, answered 204, with nothing else stored', async () => {
    const { intake, commits } = pipeline();
    const req = request('batch', { items: [] });
    expect(await intake.accept(gen, req, intake.authorize(gen, req))).toEqual({ status: 204, body: {}, requestId: 'req-1' });
    expect(commits).toEqual([
      expect.objectContaining({ events: [], runs: [], request: expect.objectContaining({ status: 204, mappingId: 'each' }) }),
    ]);
  });

  it('keeps no request when the request log is off', async () => {
    const { intake, commits } = pipeline();
    const req = request('wake', { text: 'x' });
    const answer = await intake.accept(unkept, req, undefined);
    expect(answer.requestId).toBeUndefined();
    expect(commits[0]!.request).toBeUndefined();
  });

  it('counts a mapping`s rate limit before resolving: past it, 429 and nothing stored', async () => {
    const { intake, commits } = pipeline();
    const req = () => request('limited', {});
    expect((await intake.accept(gen, req(), intake.authorize(gen, req()))).status).toBe(200);
    await expect(intake.accept(gen, req(), intake.authorize(gen, req()))).rejects.toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect(commits).toHaveLength(1);
  });

  it('replays without the idempotency key and without the signature, marking the kept request', async () => {
    const { intake, commits } = pipeline();
    const headers = { 'content-type': 'application/json', 'idempotency-key': 'k-2' };
    const first = await intake.accept(gen, request('wake', { text: 'again' }, { headers }), undefined);
    const replay = request('github', { action: 'closed', number: 8 }, { headers, replayOf: first.requestId!, authenticated: true });
    const answer = await intake.accept(gen, replay, ownerWithoutCredential(gen, replay), { idempotent: false });
    expect(answer.body.duplicate).toBeUndefined();
    expect(commits[1]!.idempotency).toBeUndefined();
    expect(commits[1]!.request).toMatchObject({ replayOf: 'req-1', mappingId: 'issues' });
  });

  it('names the event type, and skips one the mapping does not take: 204, kept, nothing run', async () => {
    const { intake, commits } = pipeline();
    const req = request(
      'acme',
      { id: 'evt_1', note: 'hi' },
      { headers: { 'content-type': 'application/json', 'x-acme-event': 'order.created' } },
    );
    expect(await intake.accept(gen, req, intake.authorize(gen, req))).toMatchObject({ status: 204, body: {} });
    expect(req.event).toBe('order.created');
    expect(commits).toEqual([
      expect.objectContaining({ runs: [], events: [], request: expect.objectContaining({ status: 204, mappingId: 'acme' }) }),
    ]);
  });

  it('takes the delivery id the mapping names as the idempotency key, over the headers', async () => {
    const { intake, commits } = pipeline();
    const req = (key: string) =>
      request(
        'acme',
        { id: 'evt_2', note: 'paid' },
        { headers: { 'content-type': 'application/json', 'x-acme-event': 'order.paid', 'idempotency-key': key } },
      );
    const first = await intake.accept(gen, req('a'), intake.authorize(gen, req('a')));
    // another header key, the same delivery id: the same delivery
    const again = await intake.accept(gen, req('b'), intake.authorize(gen, req('b')));
    expect(again).toEqual({ status: 202, body: { ...first.body, duplicate: true } });
    expect(commits).toHaveLength(1);
    expect(commits[0]!.idempotency!.key).toBe('acme\nevt_2');
  });

  it('cuts hook content past maxChars inside the boundary, saying how much was left out', async () => {
    const { intake, commits } = pipeline();
    const note = `${'word '.repeat(40)}${'x'.repeat(300)}`;
    const req = request('acme', { id: 'evt_3', note }, { headers: { 'content-type': 'application/json', 'x-acme-event': 'order.paid' } });
    await intake.accept(gen, req, intake.authorize(gen, req));
    const message = commits[0]!.runs[0]!.message;
    expect(message).toContain(`${'word '.repeat(19)}word\n[… ${(note.length - 99).toLocaleString('en-US')} more characters not shown]`);
    expect(message).not.toContain('xxx');
  });

  it('refuses an invalid body as a direct request would be refused, storing nothing', async () => {
    const { intake, commits } = pipeline();
    await expect(intake.accept(gen, request('agent', { message: '' }), undefined)).rejects.toMatchObject({
      status: 400,
      field: 'message',
    });
    expect(commits).toEqual([]);
  });
});
