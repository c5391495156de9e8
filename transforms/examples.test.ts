/**
 * Every example transform through the real pipeline: the mappings shown in
 * docs/transforms.md are compiled, the modules loaded into a worker pool from
 * this folder, and each fixture resolved the way the server resolves a
 * request (first match, transform in a worker, validation, safety boundary).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGeneration } from '../src/generation/build.ts';
import type { Generation } from '../src/generation/types.ts';
import { authorize } from '../src/intake/credential.ts';
import type { HookRequest } from '../src/intake/request.ts';
import { type Resolution, resolve as resolveStep } from '../src/intake/resolve.ts';
import type { PreparedAgent, PreparedWake } from '../src/intake/prepare.ts';
import { builtinPlugins } from '../plugins/index.ts';
import { captureLogger, testConfig } from '../test/helpers/runtime.ts';
import { EXAMPLES_DIR, fixture } from '../test/helpers/transform-context.ts';
import { signatureHeaders } from '../src/auth/signing.ts';
import type { VerifySpec } from '../src/auth/signatures.ts';

// as in docs/transforms.md, with literal secrets instead of ${ENV} references
const mappings = [
  {
    id: 'github',
    match: { path: 'github' },
    name: 'GitHub',
    verify: { type: 'github', secret: 'gh-secret' },
    transform: { module: 'github.ts' },
  },
  {
    id: 'stripe',
    match: { path: 'stripe' },
    name: 'Stripe',
    verify: { type: 'stripe', secret: 'whsec_test' },
    transform: { module: 'stripe.ts' },
  },
  {
    id: 'alertmanager',
    match: { path: 'alertmanager', payload: { version: '4' } },
    name: 'Alertmanager',
    label: 'Alertmanager',
    transform: { module: 'alertmanager.ts' },
  },
  { id: 'grafana', match: { path: 'grafana' }, label: 'Grafana', transform: { module: 'grafana.ts' } },
  { id: 'forms', match: { path: 'forms' }, transform: { module: 'form.ts' } },
  {
    id: 'telegram',
    match: { path: 'telegram' },
    name: 'Telegram',
    verify: { type: 'telegram', secret: 'tg_secret-0' },
    transform: { module: 'telegram.ts' },
  },
];

/** Secret tokens are not signatures: the verified mappings that take one get it as a header. */
const tokenHeaders: Record<string, Record<string, string>> = { telegram: { 'x-telegram-bot-api-secret-token': 'tg_secret-0' } };

let gen: Generation;
const log = captureLogger('info');

beforeAll(async () => {
  // a channel with the id `telegram` for the replies (any type: the example only names it)
  const channels = { telegram: { type: 'webhook', url: 'http://127.0.0.1:9/replies' } };
  const loaded = testConfig({
    hooks: { enabled: true, token: 'hook-token-0123456789abcdef0123', transformsDir: EXAMPLES_DIR, mappings },
    channels,
  });
  gen = await buildGeneration(loaded, { builtins: builtinPlugins, logger: log.logger });
});
afterAll(async () => {
  await gen?.dispose();
});

function resolve(name: string, fixtureName: string, headers: Record<string, string> = {}): Promise<Resolution> {
  const payload = fixture(fixtureName);
  const rawBody = Buffer.from(JSON.stringify(payload));
  const receivedAt = Date.parse('2026-11-20T12:00:00Z');
  // the verified mappings take a signed delivery, as GitHub and Stripe send it
  const verify = mappings.find((m) => m.id === name)?.verify as VerifySpec | undefined;
  const signature = tokenHeaders[name] ?? (verify ? signatureHeaders(verify, rawBody, receivedAt) : {});
  const req: HookRequest = {
    name,
    payload,
    headers: { 'content-type': 'application/json', ...signature, ...headers },
    query: {},
    path: `/hooks/${name}`,
    url: `/hooks/${name}`,
    rawBody,
    receivedAt,
    authenticated: !verify,
  };
  return resolveStep(gen, req, authorize(gen, req, log.logger), log.logger);
}

const actionsOf = (r: Resolution) => {
  if (r.kind !== 'actions') throw new Error('expected actions');
  return r.actions;
};

describe('the example transforms in the real pipeline', () => {
  it('loads every example into the worker pool', () => {
    expect(gen.pipelines.map((p) => p.id)).toEqual(mappings.map((m) => m.id));
    expect(gen.transforms).toBeDefined();
  });

  it('github: an opened issue becomes one wrapped agent run, a synchronize a skip', async () => {
    const r = await resolve('github', 'github-issues-opened.json', { 'x-github-event': 'issues' });
    expect(r.kind === 'actions' && r.actions[0]!.origin).toBe('github');
    const [run] = actionsOf(r) as PreparedAgent[];
    expect(run).toMatchObject({ kind: 'agent', name: 'GitHub', sessionKey: 'hook:github:acme/app:7', label: 'GitHub', trusted: false });
    expect(run!.message).toMatch(
      /<<<EXTERNAL_UNTRUSTED_CONTENT id="[0-9a-f]+" source="GitHub">>>\nIssue #7 in acme\/app opened by octocat: /,
    );
    expect(await resolve('github', 'github-pull_request-synchronize.json', { 'x-github-event': 'pull_request' })).toMatchObject({
      kind: 'skip',
    });
  });

  it('github: a merged pull request becomes a wake for the next heartbeat', async () => {
    const [w] = actionsOf(
      await resolve('github', 'github-pull_request-merged.json', { 'x-github-event': 'pull_request' }),
    ) as PreparedWake[];
    expect(w).toMatchObject({ kind: 'wake', mode: 'next-heartbeat', origin: 'github' });
    expect(w!.text).toContain('\nPull request #12 in acme/app merged by maintainer-ana: ');
  });

  it('stripe: a failed payment is an agent run in the customer session, a refund a skip', async () => {
    const [run] = actionsOf(await resolve('stripe', 'stripe-payment_intent.payment_failed.json')) as PreparedAgent[];
    expect(run).toMatchObject({ kind: 'agent', name: 'Stripe', sessionKey: 'hook:stripe:cus_R4xYz9AbCdEf12' });
    expect((await resolve('stripe', 'stripe-charge.refunded.json')).kind).toBe('skip');
  });

  it('alertmanager: a group fans out into an agent run and two wakes', async () => {
    const list = actionsOf(await resolve('alertmanager', 'alertmanager-group.json'));
    expect(list.map((a) => (a.kind === 'wake' ? `wake ${a.mode}` : `agent ${a.sessionKey}`))).toEqual([
      'agent hook:alert:c2a4b3d0e9f81a7c',
      'wake now',
      'wake next-heartbeat',
    ]);
    expect((list[0] as PreparedAgent).message).toContain('source="Alertmanager"');
  });

  it('grafana: one wake per firing alert; only resolved alerts is a skip', async () => {
    const list = actionsOf(await resolve('grafana', 'grafana-firing.json')) as PreparedWake[];
    expect(list.map((a) => a.kind)).toEqual(['wake', 'wake']);
    expect(list[0]!.text).toContain('source="Grafana"');
    expect(await resolve('grafana', 'grafana-resolved.json')).toMatchObject({ kind: 'skip' });
  });

  it('forms: a submission becomes an agent run named after the form (a name the transform returns is no boundary source)', async () => {
    const [run] = actionsOf(await resolve('forms', 'form-tally.json')) as PreparedAgent[];
    expect(run).toMatchObject({ kind: 'agent', name: 'Form Contact us', label: 'forms' });
    expect(run!.message).toContain('\nTopic: Billing\n');
  });

  it('telegram: a chat message is an agent run whose reply goes back to the same chat; a sticker a skip', async () => {
    const [run] = actionsOf(await resolve('telegram', 'telegram-message-topic.json')) as PreparedAgent[];
    expect(run).toMatchObject({
      kind: 'agent',
      name: 'Telegram',
      sessionKey: 'hook:telegram:-1001234567890:42',
      deliver: true,
      channel: 'telegram',
      to: '-1001234567890:42',
    });
    expect(run!.message).toContain('source="Telegram"');
    expect(await resolve('telegram', 'telegram-sticker.json')).toMatchObject({ kind: 'skip' });
  });
});
