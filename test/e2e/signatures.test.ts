/**
 * Provider signatures as a hook's credential, and per-mapping rate limits,
 * over real HTTP against the real CLI.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, get, post, startCli, type Running } from '../helpers/cli.ts';
import { signatureHeaders } from '../../src/auth/signing.ts';
import type { VerifySpec } from '../../src/auth/signatures.ts';

const HOOK = `hk_${randomBytes(18).toString('hex')}`;
const GW = `gw_${randomBytes(18).toString('hex')}`;
const specs: Record<string, VerifySpec> = {
  github: { type: 'github', secret: [`gh_old_${randomBytes(8).toString('hex')}`, `gh_new_${randomBytes(8).toString('hex')}`] },
  stripe: { type: 'stripe', secret: `whsec_${randomBytes(12).toString('hex')}` },
  slack: { type: 'slack', secret: randomBytes(16).toString('hex') },
  standard: { type: 'standard-webhooks', secret: `whsec_${randomBytes(24).toString('base64')}` },
  generic: { type: 'hmac-sha256', secret: randomBytes(16).toString('hex'), header: 'X-Acme-Signature' },
};

const config = {
  gateway: { auth: { token: GW } },
  hooks: {
    enabled: true,
    token: HOOK,
    authFailures: { max: 20, windowSeconds: 60 },
    mappings: [
      ...Object.entries(specs).map(([path, verify]) => ({
        id: path,
        match: { path },
        action: 'wake',
        textTemplate: `${path} {{event}}`,
        verify,
      })),
      {
        id: 'gh-push',
        match: { path: 'ghpush', headers: { 'x-github-event': 'push' } },
        action: 'wake',
        textTemplate: 'push {{event}}',
        verify: specs.github,
      },
      {
        id: 'slash',
        match: { path: 'slash', payload: { command: '/deploy' } },
        action: 'wake',
        wakeMode: 'next-heartbeat',
        textTemplate: 'slash {{command}} {{text}} by {{user_name}} in {{region[0]}}+{{region[1]}}',
        verify: specs.slack,
      },
      { id: 'plain', match: { path: 'plain' }, action: 'wake', textTemplate: 'plain {{event}}' },
      { id: 'limited', match: { path: 'limited' }, action: 'wake', textTemplate: 'limited', rateLimit: { max: 3, perSeconds: 60 } },
    ],
  },
  agents: { defaults: { heartbeat: { every: '0' } } },
};

const send = (srv: Running, path: string, body: string, headers: Record<string, string>) => post(`${srv.url}/hooks/${path}`, body, headers);
const sign = (name: string, body: string, opts: { at?: number; secretIndex?: number } = {}) =>
  signatureHeaders(
    specs[name]!,
    Buffer.from(body),
    opts.at ?? Date.now(),
    opts.secretIndex !== undefined ? { secretIndex: opts.secretIndex } : {},
  );

describe('signed hooks', () => {
  let srv: Running;
  beforeAll(async () => {
    srv = await startCli({ config });
  });
  afterAll(async () => {
    await srv.stop();
    cleanup(srv.dir);
  });

  it.each(Object.keys(specs))('accepts a valid %s signature without the hook token', async (name) => {
    const body = JSON.stringify({ event: 'push', n: 1 });
    const r = await send(srv, name, body, sign(name, body));
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
  });

  it('accepts a signature made with the second of two rotated secrets', async () => {
    const body = JSON.stringify({ event: 'rotated' });
    expect((await send(srv, 'github', body, sign('github', body, { secretIndex: 1 }))).status).toBe(200);
  });

  it.each(Object.keys(specs))(
    'refuses %s with a tampered body, no signature, or only the hook token: 401 INVALID_SIGNATURE',
    async (name) => {
      const body = JSON.stringify({ event: 'push', n: 1 });
      const headers = sign(name, body);
      const tampered = await send(srv, name, body.replace('1', '2'), headers);
      expect(tampered.status).toBe(401);
      expect(tampered.body).toEqual({ ok: false, error: 'missing or invalid signature', code: 'INVALID_SIGNATURE' });
      expect((await send(srv, name, body, {})).body.code).toBe('INVALID_SIGNATURE');
      expect((await send(srv, name, body, { authorization: `Bearer ${HOOK}` })).body.code).toBe('INVALID_SIGNATURE');
    },
  );

  it.each(['stripe', 'slack', 'standard'])('refuses a %s signature older than the tolerance', async (name) => {
    const body = JSON.stringify({ event: 'old' });
    const r = await send(srv, name, body, sign(name, body, { at: Date.now() - 10 * 60_000 }));
    expect(r.body.code).toBe('INVALID_SIGNATURE');
    await srv.waitFor('timestamp outside tolerance');
  });

  it.each([
    ['github', 'x-github-delivery'],
    ['standard', 'webhook-id'],
    ['stripe', 'idempotency-key'],
  ])('%s: a repeat of a known %s gets the first answer only with a valid signature', async (name, keyHeader) => {
    const key = `delivery-${randomBytes(8).toString('hex')}`;
    const body = JSON.stringify({ event: 'once' });
    const signed = { ...signatureHeaders(specs[name]!, Buffer.from(body), Date.now(), { messageId: key }), [keyHeader]: key };
    const first = await send(srv, name, body, signed);
    expect(first.status).toBe(200);
    expect(first.body.eventId).toEqual(expect.any(String));
    const refused = [{ [keyHeader]: key }, { [keyHeader]: key, authorization: `Bearer ${HOOK}` }];
    for (const headers of refused)
      expect((await send(srv, name, body, headers)).body).toEqual({
        ok: false,
        error: 'missing or invalid signature',
        code: 'INVALID_SIGNATURE',
      });
    // signed for another body
    expect((await send(srv, name, body.replace('once', 'twice'), signed)).body.code).toBe('INVALID_SIGNATURE');
    const again = await send(srv, name, body, signed);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
  });

  it('tells a validly signed request that no mapping matches (404), and one without a valid credential 401', async () => {
    const body = JSON.stringify({ action: 'opened', issue: { number: 1 } });
    const issues = await send(srv, 'ghpush', body, { ...sign('github', body), 'x-github-event': 'issues' });
    expect(issues.status).toBe(404);
    expect(issues.body).toEqual({
      ok: false,
      code: 'HOOK_NOT_FOUND',
      error: 'the signature is valid for mapping "gh-push", but no mapping\'s match accepts this request to "ghpush"',
    });
    expect((await send(srv, 'ghpush', body, { ...sign('github', body), 'x-github-event': 'push' })).status).toBe(200);
    for (const headers of [{}, { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }] as Record<string, string>[]) {
      const r = await send(srv, 'ghpush', body, { ...headers, 'x-github-event': 'issues' });
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('UNAUTHORIZED');
    }
  });

  it("answers GitHub's ping 204 when its signature verifies, whatever the mapping matches, and stores and runs nothing", async () => {
    // a ping as GitHub sends it when a webhook is created, signed by GitHub's own library
    const secret = (specs.github!.secret as string[])[1]!;
    const body = JSON.stringify({ zen: 'Design for failure.', hook_id: 42, hook: { type: 'Repository', events: ['push'] } });
    const ping = (signature: string, path = 'ghpush') =>
      send(srv, path, body, {
        'x-github-event': 'ping',
        'x-github-delivery': randomUUID(),
        'x-github-hook-id': '42',
        'user-agent': 'GitHub-Hookshot/044aadd',
        'x-hub-signature-256': signature,
      });
    const stored = async () => ({
      events: (await get(`${srv.url}/api/main/events?limit=10000`, GW)).body.events.length,
      kept: (await get(`${srv.url}/api/requests?limit=10000`, GW)).body.requests.filter((r: { status: number }) => r.status < 400).length,
      // hook runs: a heartbeat an earlier wake asked for may run meanwhile
      runs: (await get(`${srv.url}/api/runs?limit=10000`, GW)).body.runs.filter((r: { kind: string }) => r.kind === 'hook').length,
    });
    const before = await stored();
    // gh-push matches push alone; github matches any event
    for (const path of ['ghpush', 'github']) {
      const r = await ping(await githubSign(secret, body), path);
      expect(r.status).toBe(204);
      expect(r.text).toBe('');
    }
    expect(await stored()).toEqual(before);
    // not verified, not answered
    const forged = await ping(await githubSign('not-the-secret', body));
    expect(forged.status).toBe(401);
    // a push signed the same way is taken as before
    const push = JSON.stringify({ event: 'push', ref: 'refs/heads/main' });
    expect(
      (await send(srv, 'ghpush', push, { 'x-github-event': 'push', 'x-hub-signature-256': await githubSign(secret, push) })).status,
    ).toBe(200);
  });

  it('takes a Slack slash command: a form post, its signature over the raw bytes, a repeated field as an array', async () => {
    const form = 'token=legacy&team_id=T0001&channel_id=C2147483705&user_name=ana&command=%2Fdeploy&text=api+v2&region=eu&region=us';
    const headers = { ...sign('slack', form), 'content-type': 'application/x-www-form-urlencoded' };
    const r = await send(srv, 'slash', form, headers);
    expect(r.status, r.text).toBe(200);
    const events = (await get(`${srv.url}/api/main/events?status=pending`, GW)).body.events as { id: string; text: string }[];
    expect(events.find((e) => e.id === r.body.eventId)!.text).toContain('slash /deploy api v2 by ana in eu+us');
    // the signature covers the bytes as sent: the same fields encoded otherwise do not verify
    expect((await send(srv, 'slash', form.replace('api+v2', 'api%20v2'), headers)).body.code).toBe('INVALID_SIGNATURE');
  });

  it('still takes the hook token on hooks without verify, and checks it before reading the body', async () => {
    expect((await send(srv, 'plain', '{"event":"x"}', { authorization: `Bearer ${HOOK}` })).status).toBe(200);
    const r = await send(srv, 'plain', '{broken json', {});
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('UNAUTHORIZED');
  });

  it('never logs the secrets or the signatures', async () => {
    const body = JSON.stringify({ event: 'log-check' });
    const headers = sign('generic', body);
    await send(srv, 'generic', body, headers);
    await send(srv, 'generic', body, { 'x-acme-signature': 'sha256=00' });
    const out = srv.output();
    for (const s of Object.values(specs)) for (const secret of [s.secret].flat()) expect(out).not.toContain(secret);
    expect(out).not.toContain(headers['x-acme-signature']!.slice(7));
    expect(out).toContain('signature rejected');
  });

  // the window's end is tested on an injected clock in test/mapping/rate-limit.test.ts
  it('limits a mapping with rateLimit: 429 with Retry-After once over, and no other hook', async () => {
    const auth = { authorization: `Bearer ${HOOK}` };
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await send(srv, 'limited', '{}', auth));
    expect(statuses.slice(0, 3).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(statuses[3]!.status).toBe(429);
    expect(statuses[3]!.body.code).toBe('RATE_LIMITED');
    const retry = Number(statuses[3]!.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    // other hooks are not affected
    expect((await send(srv, 'plain', '{"event":"x"}', auth)).status).toBe(200);
  });
});

describe('failed signatures count toward the auth-failure throttle', () => {
  it('answers 429 after 20 bad signatures from one address', async () => {
    const srv = await startCli({ config });
    try {
      const body = JSON.stringify({ event: 'x' });
      const statuses: number[] = [];
      for (let i = 0; i < 21; i++)
        statuses.push((await send(srv, 'github', body, { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` })).status);
      expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
      expect(statuses[20]).toBe(429);
      // blocked even with a valid signature until the window passes
      expect((await send(srv, 'github', body, sign('github', body))).status).toBe(429);
    } finally {
      await srv.stop();
      cleanup(srv.dir);
    }
  });
});
