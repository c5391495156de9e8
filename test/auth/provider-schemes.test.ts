/**
 * The table-driven HMAC schemes (src/auth/schemes/) against each provider's own side: a request signed
 * by the provider's SDK where one exists, or by the algorithm as the provider documents it, written
 * out here independently of src/auth/signing.ts (docs/verifiers.md says which).
 */
import { createHmac } from 'node:crypto';
import { Paddle } from '@paddle/paddle-node-sdk';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { getHmac as shopifyHmac } from '@shopify/shopify-api/test-helpers';
import { describe, expect, it } from 'vitest';
import { isCredentialHeader } from '../../src/auth/credential-headers.ts';
import { SCHEMES } from '../../src/auth/signature-schemes.ts';
import { compileVerifier, type VerifySpec } from '../../src/auth/signatures.ts';
import { signatureHeaders } from '../../src/auth/signing.ts';

const NOW = 1_700_000_000;
const buf = (s: string) => Buffer.from(s, 'utf8');
const hmac = (alg: 'sha1' | 'sha256', key: string, data: string | Buffer) => createHmac(alg, key).update(data).digest();

interface ProviderCase {
  spec: VerifySpec;
  /** The provider's documentation the signing below follows. */
  source: string;
  /** Headers as the provider sends them for `body` at `t` (seconds), signed with `secret`. */
  sign(secret: string, body: string, t: number): Record<string, string>;
}

const CASES: Record<string, ProviderCase> = {
  sentry: {
    spec: { type: 'sentry', secret: 'sentry-client-secret' },
    source: 'Sentry docs, Integration Platform › Webhooks › "Sentry-Hook-Signature"',
    sign: (s, body) => ({ 'sentry-hook-signature': hmac('sha256', s, body).toString('hex') }),
  },
  pagerduty: {
    spec: { type: 'pagerduty', secret: 'pagerduty-secret' },
    source: 'PagerDuty developer docs, Webhooks › "Verifying Signatures" (v1=<hex>, comma-separated)',
    sign: (s, body) => ({ 'x-pagerduty-signature': `v1=${hmac('sha256', s, body).toString('hex')}` }),
  },
  jira: {
    spec: { type: 'jira', secret: 'jira-secret' },
    source: 'Atlassian, Jira Cloud platform › Webhooks › "Secure admin webhooks" (X-Hub-Signature: sha256=<hex>)',
    sign: (s, body) => ({ 'x-hub-signature': `sha256=${hmac('sha256', s, body).toString('hex')}` }),
  },
  typeform: {
    spec: { type: 'typeform', secret: 'typeform-secret' },
    source: 'Typeform developer docs, Webhooks › "Secure your webhooks" (Typeform-Signature: sha256=<base64>)',
    sign: (s, body) => ({ 'typeform-signature': `sha256=${hmac('sha256', s, body).toString('base64')}` }),
  },
  intercom: {
    spec: { type: 'intercom', secret: 'intercom-client-secret' },
    source: 'Intercom developer docs, Webhooks › "Signed notifications" (X-Hub-Signature: sha1=<hex>)',
    sign: (s, body) => ({ 'x-hub-signature': `sha1=${hmac('sha1', s, body).toString('hex')}` }),
  },
  calendly: {
    spec: { type: 'calendly', secret: 'calendly-signing-key' },
    source: 'Calendly developer docs, "Webhook Signatures" (t=<t>,v1=<hex> over <t>.<body>)',
    sign: (s, body, t) => ({ 'calendly-webhook-signature': `t=${t},v1=${hmac('sha256', s, `${t}.${body}`).toString('hex')}` }),
  },
  paddle: {
    spec: { type: 'paddle', secret: 'pdl_ntfset_01gt21c5pdx9q1e4mh1xrsjjn6_zXPA8c6N7MpMmCbLcvqu3bOgMCEd3tLa' },
    source: 'Paddle developer docs, Webhooks › "Verify webhook signatures" (ts=<ts>;h1=<hex> over <ts>:<body>)',
    sign: (s, body, t) => ({ 'paddle-signature': `ts=${t};h1=${hmac('sha256', s, `${t}:${body}`).toString('hex')}` }),
  },
  zoom: {
    spec: { type: 'zoom', secret: 'zoom-secret-token' },
    source: 'Zoom developer docs, Webhooks › "Verify webhook events" (v0=<hex> over v0:<ts>:<body>)',
    sign: (s, body, t) => ({
      'x-zm-signature': `v0=${hmac('sha256', s, `v0:${t}:${body}`).toString('hex')}`,
      'x-zm-request-timestamp': String(t),
    }),
  },
  shopify: {
    spec: { type: 'shopify', secret: 'shpss_client_secret' },
    source: '@shopify/shopify-api test-helpers getHmac (the SDK signs webhooks for its own tests)',
    sign: (s, body) => ({ 'x-shopify-hmac-sha256': shopifyHmac(body, s) }),
  },
};

const BODY = '{"id":"evt_1","text":"héllo \\u2028 wörld","n":[1,2,3]}\n';

describe.each(Object.entries(CASES))('%s, signed as the provider does', (_name, c) => {
  const verify = compileVerifier(c.spec);
  const secret = c.spec.secret as string;

  it('verifies, and our own signer (test tooling) agrees with the provider on every header', () => {
    const headers = c.sign(secret, BODY, NOW);
    expect(verify(headers, buf(BODY), NOW * 1000)).toEqual({ ok: true, secretIndex: 0 });
    expect(signatureHeaders(c.spec, buf(BODY), NOW * 1000)).toEqual(headers);
    expect(c.source.length).toBeGreaterThan(20);
  });

  it('refuses a wrong secret and a body changed by one byte', () => {
    const headers = c.sign(`${secret}x`, BODY, NOW);
    expect(verify(headers, buf(BODY), NOW * 1000)).toEqual({ ok: false, reason: 'no signature matches' });
    expect(verify(c.sign(secret, BODY, NOW), buf(BODY.replace('1', '2')), NOW * 1000)).toEqual({
      ok: false,
      reason: 'no signature matches',
    });
  });

  it('takes either of two rotated secrets', () => {
    const both = compileVerifier({ ...c.spec, secret: ['the-new-secret', secret] });
    expect(both(c.sign(secret, BODY, NOW), buf(BODY), NOW * 1000)).toEqual({ ok: true, secretIndex: 1 });
    expect(both(c.sign('the-new-secret', BODY, NOW), buf(BODY), NOW * 1000)).toEqual({ ok: true, secretIndex: 0 });
  });

  it('refuses a missing or malformed header with a fixed phrase', () => {
    expect(verify({}, buf(BODY), NOW * 1000)).toEqual({ ok: false, reason: 'missing signature header' });
    const header = SCHEMES[c.spec.type].header;
    expect(verify({ ...c.sign(secret, BODY, NOW), [header]: 'not a signature' }, buf(BODY), NOW * 1000)).toEqual({
      ok: false,
      reason: 'malformed signature header',
    });
  });

  it('its signature header is a credential: never shown to transforms, never kept', () => {
    for (const name of Object.keys(c.sign(secret, BODY, NOW)))
      if (!name.endsWith('timestamp')) expect(isCredentialHeader(name, new Set())).toBe(true);
  });
});

describe('the providers’ SDKs accept what the documented algorithm signs', () => {
  it('paddle: @paddle/paddle-node-sdk Webhooks.isSignatureValid', async () => {
    // the SDK checks the timestamp against the real clock within 5 s, so sign at now
    const t = Math.floor(Date.now() / 1000);
    const headers = CASES.paddle!.sign(CASES.paddle!.spec.secret as string, BODY, t);
    // a client sets up the SDK's Node runtime (its crypto); the API key is never used
    const sdk = new Paddle('pdl_sdbx_apikey_01gtgztp8fy6vwzqsnx9ygwc20_unusedunusedunusedunused').webhooks;
    expect(await sdk.isSignatureValid(BODY, CASES.paddle!.spec.secret as string, headers['paddle-signature']!)).toBe(true);
    expect(await sdk.isSignatureValid(BODY, 'pdl_ntfset_other', headers['paddle-signature']!)).toBe(false);
    expect(compileVerifier(CASES.paddle!.spec)(headers, buf(BODY), t * 1000).ok).toBe(true);
  });

  it('paddle: several h1 values while a secret rotates', () => {
    const spec = CASES.paddle!.spec;
    const mac = hmac('sha256', spec.secret as string, `${NOW}:${BODY}`).toString('hex');
    const header = `ts=${NOW};h1=${'0'.repeat(64)};h1=${mac}`;
    expect(compileVerifier(spec)({ 'paddle-signature': header }, buf(BODY), NOW * 1000).ok).toBe(true);
  });

  it('linear: @linear/sdk LinearWebhookClient.verify, and the HMAC scheme under it', () => {
    const secret = 'lin_wh_secret';
    const body = JSON.stringify({ action: 'create', type: 'Issue', data: { id: 'i1' }, webhookTimestamp: Date.now() });
    const signature = hmac('sha256', secret, body).toString('hex');
    expect(new LinearWebhookClient(secret).verify(buf(body), signature)).toBe(true);
    expect(() => new LinearWebhookClient(`${secret}x`).verify(buf(body), signature)).toThrow();
    expect(compileVerifier({ type: 'linear', secret })({ 'linear-signature': signature }, buf(body), 0)).toEqual({
      ok: true,
      secretIndex: 0,
    });
  });

  it('pagerduty: any v1 in the list may match; other versions are ignored', () => {
    const spec = CASES.pagerduty!.spec;
    const mac = hmac('sha256', spec.secret as string, BODY).toString('hex');
    const header = `v1=${'f'.repeat(64)},v2=${mac},v1=${mac}`;
    expect(compileVerifier(spec)({ 'x-pagerduty-signature': header }, buf(BODY), 0).ok).toBe(true);
    expect(compileVerifier(spec)({ 'x-pagerduty-signature': `v2=${mac}` }, buf(BODY), 0)).toEqual({
      ok: false,
      reason: 'malformed signature header',
    });
  });

  it('intercom and jira share X-Hub-Signature, each reading only its own algorithm', () => {
    const sha1 = CASES.intercom!.sign('s', BODY, NOW);
    const sha256 = CASES.jira!.sign('s', BODY, NOW);
    expect(compileVerifier({ type: 'intercom', secret: 's' })(sha256, buf(BODY), 0)).toEqual({
      ok: false,
      reason: 'malformed signature header',
    });
    expect(compileVerifier({ type: 'jira', secret: 's' })(sha1, buf(BODY), 0)).toEqual({ ok: false, reason: 'malformed signature header' });
  });
});
