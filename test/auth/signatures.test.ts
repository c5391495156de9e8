import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { macEquals, macFromBase64, macFromHex } from '../../src/auth/signature-parts.ts';
import {
  compileVerifier,
  DEFAULT_TOLERANCE_SECONDS,
  SignatureConfigError,
  verifySpecIssues,
  type HeaderBag,
  type VerifySpec,
} from '../../src/auth/signatures.ts';
import { SCHEMES } from '../../src/auth/signature-schemes.ts';
import { signatureHeaders } from '../../src/auth/signing.ts';
import { VECTORS } from '../fixtures/signature-vectors.ts';

const FAILURES = [
  'missing signature header',
  'malformed signature header',
  'missing timestamp',
  'malformed timestamp',
  'missing message id',
  'no signature matches',
  'timestamp outside tolerance',
  'verifier error',
];

const buf = (s: string) => Buffer.from(s, 'utf8');
const hmacHex = (key: string, data: string) => createHmac('sha256', key).update(data).digest('hex');

/** A request signed with `spec`'s first secret at `tSeconds`, through the provider's layout. */
function signed(spec: VerifySpec, body: string, tSeconds: number) {
  return { body: buf(body), headers: signatureHeaders(spec, buf(body), tSeconds * 1000, { messageId: 'msg_fixed' }) };
}

const NOW = 1_700_000_000;
const SPECS: Record<VerifySpec['type'], VerifySpec> = {
  github: { type: 'github', secret: 'gh-secret-0123456789' },
  stripe: { type: 'stripe', secret: 'whsec_stripe_test_0123456789' },
  slack: { type: 'slack', secret: 'slack-signing-secret-0123' },
  'standard-webhooks': {
    type: 'standard-webhooks',
    secret: `whsec_${Buffer.from('standard webhooks secret 32 bytes').toString('base64')}`,
  },
  'hmac-sha256': { type: 'hmac-sha256', secret: 'generic-secret-0123456789', header: 'X-Custom-Signature' },
  shopify: { type: 'shopify', secret: 'shpss_client_secret_0123' },
  sentry: { type: 'sentry', secret: 'sentry-client-secret-0123' },
  pagerduty: { type: 'pagerduty', secret: 'pagerduty-signing-secret-0123' },
  jira: { type: 'jira', secret: 'jira-admin-webhook-secret' },
  typeform: { type: 'typeform', secret: 'typeform-webhook-secret' },
  intercom: { type: 'intercom', secret: 'intercom-client-secret' },
  linear: { type: 'linear', secret: 'lin_wh_signing_secret_0123' },
  calendly: { type: 'calendly', secret: 'calendly-signing-key-0123' },
  paddle: { type: 'paddle', secret: 'pdl_ntfset_01gkpjp8bkm3tm53kdgkx6sms7_6h3qd3uFSi9YCD3OLYAShQI90XTI5vEI' },
  zoom: { type: 'zoom', secret: 'zoom-secret-token-0123' },
};
const TYPES = Object.keys(SPECS) as VerifySpec['type'][];
const TIMESTAMPED = ['stripe', 'slack', 'standard-webhooks', 'calendly', 'paddle', 'zoom'] as const;

describe('compileVerifier() with published test vectors', () => {
  it.each(VECTORS.map((v) => [v.name, v] as const))('accepts %s', (_name, v) => {
    const verify = compileVerifier(v.spec);
    expect(verify(v.headers, buf(v.body), v.nowMs)).toEqual({ ok: true, secretIndex: 0 });
  });

  it.each(VECTORS.map((v) => [v.name, v] as const))('rejects %s with its body changed by one byte', (_name, v) => {
    const body = buf(v.body);
    body[body.length >> 1]! ^= 0x01;
    expect(compileVerifier(v.spec)(v.headers, body, v.nowMs)).toEqual({ ok: false, reason: 'no signature matches' });
  });

  it.each(VECTORS.map((v) => [v.name, v] as const))('rejects %s under another secret', (_name, v) => {
    const other: VerifySpec =
      v.spec.type === 'standard-webhooks'
        ? { ...v.spec, secret: `whsec_${Buffer.from('a different key of some length').toString('base64')}` }
        : { ...v.spec, secret: `${v.spec.secret as string}x` };
    expect(compileVerifier(other)(v.headers, buf(v.body), v.nowMs)).toEqual({ ok: false, reason: 'no signature matches' });
  });

  it('every vector states its source', () => {
    for (const v of VECTORS) expect(v.source.length).toBeGreaterThan(20);
  });
});

describe('signatureHeaders() reproduces the published signatures', () => {
  it.each(VECTORS.filter((v) => v.spec.type !== 'stripe').map((v) => [v.name, v] as const))('%s', (_name, v) => {
    const headers = signatureHeaders(v.spec, buf(v.body), v.nowMs, v.messageId ? { messageId: v.messageId } : {});
    for (const [k, value] of Object.entries(headers)) expect(value).toBe(v.headers[k]);
  });

  it('stripe: the v1 element of the stripe-dotnet header', () => {
    const v = VECTORS.find((x) => x.spec.type === 'stripe')!;
    const headers = signatureHeaders(v.spec, buf(v.body), 1533204620 * 1000);
    expect(v.headers['stripe-signature']!.startsWith(headers['stripe-signature']!)).toBe(true);
  });

  it.each(TYPES)('%s: a request it signs verifies', (type) => {
    const { body, headers } = signed(SPECS[type], '{"event":"ping"}', NOW);
    expect(compileVerifier(SPECS[type])(headers, body, NOW * 1000)).toEqual({ ok: true, secretIndex: 0 });
  });
});

describe('compileVerifier(): tampering', () => {
  it.each(TYPES)('%s: flipping any single byte of the body fails', (type) => {
    const verify = compileVerifier(SPECS[type]);
    const { body, headers } = signed(SPECS[type], '{"action":"opened","number":42}', NOW);
    for (let i = 0; i < body.length; i++) {
      const copy = Buffer.from(body);
      copy[i]! ^= 0x20;
      expect(verify(headers, copy, NOW * 1000)).toEqual({ ok: false, reason: 'no signature matches' });
    }
  });

  it.each(TYPES)('%s: an appended byte or a truncated body fails', (type) => {
    const verify = compileVerifier(SPECS[type]);
    const { body, headers } = signed(SPECS[type], '{"a":1}', NOW);
    expect(verify(headers, Buffer.concat([body, buf(' ')]), NOW * 1000).ok).toBe(false);
    expect(verify(headers, body.subarray(0, body.length - 1), NOW * 1000).ok).toBe(false);
  });

  it('stripe: the signed timestamp is part of the MAC', () => {
    const { body, headers } = signed(SPECS.stripe, '{}', NOW);
    const moved = { 'stripe-signature': headers['stripe-signature']!.replace(`t=${NOW}`, `t=${NOW + 1}`) };
    expect(compileVerifier(SPECS.stripe)(moved, body, NOW * 1000)).toEqual({ ok: false, reason: 'no signature matches' });
  });

  it('slack: the request timestamp header is part of the MAC', () => {
    const { body, headers } = signed(SPECS.slack, '{}', NOW);
    const moved = { ...headers, 'x-slack-request-timestamp': String(NOW - 1) };
    expect(compileVerifier(SPECS.slack)(moved, body, NOW * 1000)).toEqual({ ok: false, reason: 'no signature matches' });
  });

  it('standard-webhooks: the message id and the timestamp are part of the MAC', () => {
    const verify = compileVerifier(SPECS['standard-webhooks']);
    const { body, headers } = signed(SPECS['standard-webhooks'], '{}', NOW);
    expect(verify({ ...headers, 'webhook-id': 'msg_other' }, body, NOW * 1000)).toEqual({ ok: false, reason: 'no signature matches' });
    expect(verify({ ...headers, 'webhook-timestamp': String(NOW + 1) }, body, NOW * 1000)).toEqual({
      ok: false,
      reason: 'no signature matches',
    });
  });

  it('standard-webhooks: a message id sent as UTF-8 bytes is verified over those exact bytes', () => {
    const spec = SPECS['standard-webhooks'];
    const key = Buffer.from((spec.secret as string).slice(6), 'base64');
    const id = 'msg_é✓';
    const sig = createHmac('sha256', key)
      .update(buf(`${id}.${NOW}.{}`))
      .digest('base64');
    // Node decodes header bytes as latin1; the verifier must sign those bytes back, not re-encode the text.
    const headers = { 'webhook-id': buf(id).toString('latin1'), 'webhook-timestamp': String(NOW), 'webhook-signature': `v1,${sig}` };
    expect(compileVerifier(spec)(headers, buf('{}'), NOW * 1000)).toEqual({ ok: true, secretIndex: 0 });
  });

  it("standard-webhooks: Svix's svix-id, svix-timestamp and svix-signature are the same scheme; the families do not mix", () => {
    const spec = SPECS['standard-webhooks'];
    const verify = compileVerifier(spec);
    const { body, headers } = signed(spec, '{}', NOW);
    const svix = {
      'svix-id': headers['webhook-id'],
      'svix-timestamp': headers['webhook-timestamp'],
      'svix-signature': headers['webhook-signature'],
    } as HeaderBag;
    expect(verify(svix, body, NOW * 1000)).toEqual({ ok: true, secretIndex: 0 });
    // a webhook-id beside Svix's signature makes it the webhook-* family, whose timestamp is missing
    expect(verify({ ...svix, 'webhook-id': 'msg_other' }, body, NOW * 1000)).toEqual({ ok: false, reason: 'missing timestamp' });
    // an overridden header name is the only one read
    expect(compileVerifier({ ...spec, header: 'x-signature' })(svix, body, NOW * 1000)).toEqual({
      ok: false,
      reason: 'missing signature header',
    });
  });
});

describe('compileVerifier(): timestamp window', () => {
  it.each(TIMESTAMPED)('%s: accepts the edges of the default 300 s window', (type) => {
    const verify = compileVerifier(SPECS[type]);
    const { body, headers } = signed(SPECS[type], '{}', NOW);
    expect(verify(headers, body, (NOW + DEFAULT_TOLERANCE_SECONDS) * 1000 + 999).ok).toBe(true);
    expect(verify(headers, body, (NOW - DEFAULT_TOLERANCE_SECONDS) * 1000).ok).toBe(true);
  });

  it.each(TIMESTAMPED)('%s: refuses an expired timestamp', (type) => {
    const { body, headers } = signed(SPECS[type], '{}', NOW);
    expect(compileVerifier(SPECS[type])(headers, body, (NOW + 301) * 1000)).toEqual({ ok: false, reason: 'timestamp outside tolerance' });
  });

  it.each(TIMESTAMPED)('%s: refuses a timestamp from the future', (type) => {
    const { body, headers } = signed(SPECS[type], '{}', NOW);
    expect(compileVerifier(SPECS[type])(headers, body, (NOW - 301) * 1000)).toEqual({ ok: false, reason: 'timestamp outside tolerance' });
  });

  it.each(TIMESTAMPED)('%s: honours toleranceSeconds', (type) => {
    const verify = compileVerifier({ ...SPECS[type], toleranceSeconds: 30 });
    const { body, headers } = signed(SPECS[type], '{}', NOW);
    expect(verify(headers, body, (NOW + 30) * 1000).ok).toBe(true);
    expect(verify(headers, body, (NOW + 31) * 1000)).toEqual({ ok: false, reason: 'timestamp outside tolerance' });
  });

  it.each(TIMESTAMPED)('%s: a broken clock (NaN) fails closed', (type) => {
    const { body, headers } = signed(SPECS[type], '{}', NOW);
    expect(compileVerifier(SPECS[type])(headers, body, Number.NaN).ok).toBe(false);
  });

  it('checks the signature before the window, so a forged stale request reads as a forgery', () => {
    const { body, headers } = signed(SPECS.stripe, '{}', NOW);
    const other = compileVerifier({ ...SPECS.stripe, secret: 'whsec_not_the_one' });
    expect(other(headers, body, (NOW + 10_000) * 1000)).toEqual({ ok: false, reason: 'no signature matches' });
  });

  it.each(['github', 'hmac-sha256', 'shopify', 'sentry', 'pagerduty', 'jira', 'typeform', 'intercom', 'linear'] as const)(
    '%s: has no timestamp, so the clock does not matter',
    (type) => {
      const { body, headers } = signed(SPECS[type], '{}', NOW);
      expect(compileVerifier(SPECS[type])(headers, body, 0).ok).toBe(true);
    },
  );
});

describe('compileVerifier(): secret rotation', () => {
  it.each(TYPES)('%s: the old and the new secret both verify while both are configured', (type) => {
    const oldSpec = SPECS[type];
    const newSpec: VerifySpec =
      type === 'standard-webhooks'
        ? { ...oldSpec, secret: `whsec_${Buffer.from('the rotated-in secret, 32 bytes!').toString('base64')}` }
        : { ...oldSpec, secret: `${oldSpec.secret as string}-rotated` };
    const both = compileVerifier({ ...oldSpec, secret: [newSpec.secret as string, oldSpec.secret as string] });
    const a = signed(oldSpec, '{"n":1}', NOW);
    const b = signed(newSpec, '{"n":2}', NOW);
    expect(both(a.headers, a.body, NOW * 1000)).toEqual({ ok: true, secretIndex: 1 });
    expect(both(b.headers, b.body, NOW * 1000)).toEqual({ ok: true, secretIndex: 0 });
    expect(compileVerifier(newSpec)(a.headers, a.body, NOW * 1000)).toEqual({ ok: false, reason: 'no signature matches' });
  });

  it('signatureHeaders() can sign with any configured secret', () => {
    const spec: VerifySpec = { type: 'github', secret: ['first', 'second'] };
    const headers = signatureHeaders(spec, buf('x'), 0, { secretIndex: 1 });
    expect(headers['x-hub-signature-256']).toBe(`sha256=${hmacHex('second', 'x')}`);
    expect(compileVerifier(spec)(headers, buf('x'), 0)).toEqual({ ok: true, secretIndex: 1 });
  });
});

describe('compileVerifier(): multiple signatures in one header', () => {
  it('stripe: any v1 may match; v0 and unknown schemes are ignored', () => {
    const { body, headers } = signed(SPECS.stripe, '{}', NOW);
    const valid = headers['stripe-signature']!.split(',')[1]!;
    const header = `t=${NOW},v1=${'0'.repeat(64)},v0=${'1'.repeat(64)},v9=zzz,${valid}`;
    expect(compileVerifier(SPECS.stripe)({ 'stripe-signature': header }, body, NOW * 1000).ok).toBe(true);
    expect(
      compileVerifier(SPECS.stripe)({ 'stripe-signature': `t=${NOW},v1=${'0'.repeat(64)},v1=${'f'.repeat(64)}` }, body, NOW * 1000),
    ).toEqual({
      ok: false,
      reason: 'no signature matches',
    });
  });

  it("standard-webhooks: space-separated list with other versions (the reference libraries' multi-sig case)", () => {
    const { body, headers } = signed(SPECS['standard-webhooks'], '{}', NOW);
    const list = [
      'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
      'v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
      headers['webhook-signature'],
      'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
    ].join(' ');
    expect(compileVerifier(SPECS['standard-webhooks'])({ ...headers, 'webhook-signature': list }, body, NOW * 1000).ok).toBe(true);
  });

  it('refuses a header listing more than 16 candidates', () => {
    const { body, headers } = signed(SPECS.stripe, '{}', NOW);
    const many = `${headers['stripe-signature']}${`,v1=${'a'.repeat(64)}`.repeat(16)}`;
    expect(compileVerifier(SPECS.stripe)({ 'stripe-signature': many }, body, NOW * 1000)).toEqual({
      ok: false,
      reason: 'malformed signature header',
    });
  });
});

describe('compileVerifier(): header names', () => {
  it('finds headers whatever their case', () => {
    const v = VECTORS[0]!;
    const verify = compileVerifier(v.spec);
    expect(verify({ 'X-Hub-Signature-256': v.headers['x-hub-signature-256'] }, buf(v.body), 0).ok).toBe(true);
    expect(verify({ 'X-HUB-SIGNATURE-256': v.headers['x-hub-signature-256'] }, buf(v.body), 0).ok).toBe(true);
    const slack = VECTORS.find((x) => x.spec.type === 'slack')!;
    const mixed = {
      'X-Slack-Signature': slack.headers['x-slack-signature'],
      'X-Slack-Request-Timestamp': slack.headers['x-slack-request-timestamp'],
    };
    expect(compileVerifier(slack.spec)(mixed, buf(slack.body), slack.nowMs).ok).toBe(true);
  });

  it('a configured header name is matched case-insensitively', () => {
    const spec = SPECS['hmac-sha256'];
    const { body, headers } = signed(spec, '{}', NOW);
    expect(Object.keys(headers)).toEqual(['x-custom-signature']);
    expect(compileVerifier(spec)({ 'X-CUSTOM-SIGNATURE': headers['x-custom-signature'] }, body, 0).ok).toBe(true);
  });

  it('`header` overrides the signature header of a provider scheme', () => {
    const spec: VerifySpec = { type: 'github', secret: 's', header: 'X-Gitea-Signature-256' };
    const { body, headers } = signed(spec, '{}', NOW);
    expect(headers['x-gitea-signature-256']).toMatch(/^sha256=/);
    expect(compileVerifier(spec)(headers, body, 0).ok).toBe(true);
    expect(compileVerifier(spec)({ 'x-hub-signature-256': headers['x-gitea-signature-256'] }, body, 0)).toEqual({
      ok: false,
      reason: 'missing signature header',
    });
  });

  it('does not read inherited properties as headers', () => {
    const verify = compileVerifier({ type: 'hmac-sha256', secret: 's', header: 'constructor' });
    expect(verify({}, buf('{}'), 0)).toEqual({ ok: false, reason: 'missing signature header' });
  });
});

describe('compileVerifier(): hmac-sha256 encodings', () => {
  const spec: VerifySpec = { type: 'hmac-sha256', secret: 'generic' };
  const verify = compileVerifier(spec);
  const mac = createHmac('sha256', 'generic').update('{"x":1}').digest();
  it.each([
    ['sha256=<hex>', `sha256=${mac.toString('hex')}`],
    ['SHA256=<HEX>', `SHA256=${mac.toString('hex').toUpperCase()}`],
    ['bare hex', mac.toString('hex')],
    ['base64', mac.toString('base64')],
    ['base64 without padding', mac.toString('base64').replace(/=$/, '')],
    ['base64url', mac.toString('base64url')],
    ['sha256=<base64>', `sha256=${mac.toString('base64')}`],
  ])('accepts %s in the default x-signature header', (_what, value) => {
    expect(verify({ 'x-signature': value }, buf('{"x":1}'), 0)).toEqual({ ok: true, secretIndex: 0 });
  });
});

describe('compileVerifier(): malformed headers fail without throwing', () => {
  const hex = 'ab'.repeat(32);
  const cases: [string, VerifySpec['type'], HeaderBag, string][] = [
    ['no header at all', 'github', {}, 'missing signature header'],
    ['empty header', 'github', { 'x-hub-signature-256': '' }, 'missing signature header'],
    ['whitespace only', 'github', { 'x-hub-signature-256': '   ' }, 'missing signature header'],
    ['no sha256= prefix', 'github', { 'x-hub-signature-256': hex }, 'malformed signature header'],
    ['legacy sha1', 'github', { 'x-hub-signature-256': `sha1=${'ab'.repeat(20)}` }, 'malformed signature header'],
    ['63 hex digits', 'github', { 'x-hub-signature-256': `sha256=${hex.slice(1)}` }, 'malformed signature header'],
    ['65 hex digits', 'github', { 'x-hub-signature-256': `sha256=${hex}a` }, 'malformed signature header'],
    ['non-hex digit', 'github', { 'x-hub-signature-256': `sha256=${hex.slice(1)}g` }, 'malformed signature header'],
    ['trailing garbage', 'github', { 'x-hub-signature-256': `sha256=${hex} extra` }, 'malformed signature header'],
    ['header repeated', 'github', { 'x-hub-signature-256': [`sha256=${hex}`, `sha256=${hex}`] }, 'malformed signature header'],
    ['oversized header', 'hmac-sha256', { 'x-custom-signature': 'a'.repeat(9000) }, 'malformed signature header'],
    ['stripe: no t', 'stripe', { 'stripe-signature': `v1=${hex}` }, 'missing timestamp'],
    ['stripe: empty t', 'stripe', { 'stripe-signature': `t=,v1=${hex}` }, 'missing timestamp'],
    ['stripe: t twice', 'stripe', { 'stripe-signature': `t=1,t=2,v1=${hex}` }, 'malformed signature header'],
    ['stripe: t not a number', 'stripe', { 'stripe-signature': `t=soon,v1=${hex}` }, 'malformed timestamp'],
    ['stripe: negative t', 'stripe', { 'stripe-signature': `t=-1,v1=${hex}` }, 'malformed timestamp'],
    ['stripe: fractional t', 'stripe', { 'stripe-signature': `t=1.5,v1=${hex}` }, 'malformed timestamp'],
    ['stripe: no v1', 'stripe', { 'stripe-signature': `t=${NOW}` }, 'malformed signature header'],
    ['stripe: v0 only', 'stripe', { 'stripe-signature': `t=${NOW},v0=${hex}` }, 'malformed signature header'],
    ['stripe: v1 not hex', 'stripe', { 'stripe-signature': `t=${NOW},v1=${'z'.repeat(64)}` }, 'malformed signature header'],
    ['stripe: separators only', 'stripe', { 'stripe-signature': ',,,' }, 'malformed signature header'],
    [
      'slack: wrong version',
      'slack',
      { 'x-slack-signature': `v1=${hex}`, 'x-slack-request-timestamp': String(NOW) },
      'malformed signature header',
    ],
    ['slack: no timestamp header', 'slack', { 'x-slack-signature': `v0=${hex}` }, 'missing timestamp'],
    [
      'slack: timestamp with spaces inside',
      'slack',
      { 'x-slack-signature': `v0=${hex}`, 'x-slack-request-timestamp': '17 00' },
      'malformed timestamp',
    ],
    [
      'slack: timestamp too long',
      'slack',
      { 'x-slack-signature': `v0=${hex}`, 'x-slack-request-timestamp': '1'.repeat(13) },
      'malformed timestamp',
    ],
    [
      'sw: no v1 entry',
      'standard-webhooks',
      { 'webhook-signature': 'v2,abc', 'webhook-id': 'm', 'webhook-timestamp': String(NOW) },
      'malformed signature header',
    ],
    [
      'sw: v1 not base64',
      'standard-webhooks',
      { 'webhook-signature': 'v1,dawfeoifkpqwoekfpqoekf', 'webhook-id': 'm', 'webhook-timestamp': String(NOW) },
      'malformed signature header',
    ],
    [
      'sw: v1 empty',
      'standard-webhooks',
      { 'webhook-signature': 'v1,', 'webhook-id': 'm', 'webhook-timestamp': String(NOW) },
      'malformed signature header',
    ],
    [
      'sw: no id',
      'standard-webhooks',
      { 'webhook-signature': `v1,${'A'.repeat(43)}=`, 'webhook-timestamp': String(NOW) },
      'missing message id',
    ],
    [
      'sw: oversized id',
      'standard-webhooks',
      { 'webhook-signature': `v1,${'A'.repeat(43)}=`, 'webhook-id': 'm'.repeat(300), 'webhook-timestamp': String(NOW) },
      'malformed signature header',
    ],
    ['sw: no timestamp', 'standard-webhooks', { 'webhook-signature': `v1,${'A'.repeat(43)}=`, 'webhook-id': 'm' }, 'missing timestamp'],
    [
      'sw: timestamp "hello"',
      'standard-webhooks',
      { 'webhook-signature': `v1,${'A'.repeat(43)}=`, 'webhook-id': 'm', 'webhook-timestamp': 'hello' },
      'malformed timestamp',
    ],
  ];
  it.each(cases)('%s', (_what, type, headers, reason) => {
    expect(compileVerifier(SPECS[type])(headers, buf('{}'), NOW * 1000)).toEqual({ ok: false, reason });
  });

  it('a header object that throws on access yields "verifier error"', () => {
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('boom');
        },
        ownKeys: () => {
          throw new Error('boom');
        },
      },
    ) as HeaderBag;
    expect(compileVerifier(SPECS.github)(hostile, buf('{}'), 0)).toEqual({ ok: false, reason: 'verifier error' });
  });

  it.each(TYPES)('%s: arbitrary header values never throw and never verify', (type) => {
    const verify = compileVerifier(SPECS[type]);
    const names = [
      'x-hub-signature-256',
      'stripe-signature',
      'x-slack-signature',
      'x-slack-request-timestamp',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'x-custom-signature',
      ...new Set(TYPES.map((t) => SCHEMES[t].header)),
      'x-zm-request-timestamp',
    ];
    const value = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.string({ unit: 'binary', maxLength: 80 }),
      fc.array(fc.string({ maxLength: 80 }), { maxLength: 3 }),
      fc.constantFrom(
        `sha256=${'0'.repeat(64)}`,
        `t=${NOW},v1=${'0'.repeat(64)}`,
        `v0=${'0'.repeat(64)}`,
        `v1,${'A'.repeat(43)}=`,
        `ts=${NOW};h1=${'0'.repeat(64)}`,
        `sha1=${'0'.repeat(40)}`,
        String(NOW),
      ),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), value), fc.uint8Array({ maxLength: 256 }), (headers, body) => {
        const r = verify(headers, body, NOW * 1000);
        expect(r.ok).toBe(false);
        if (!r.ok) expect(FAILURES).toContain(r.reason);
      }),
      { numRuns: 300 },
    );
  });
});

describe('compileVerifier(): nothing secret leaks into results', () => {
  it.each(TYPES)('%s: a failure carries only a fixed reason', (type) => {
    const spec = SPECS[type];
    const { headers } = signed(spec, '{"a":1}', NOW);
    const r = compileVerifier(spec)(headers, buf('{"a":2}'), NOW * 1000);
    const text = JSON.stringify(r);
    expect(text).not.toContain(spec.secret as string);
    for (const v of Object.values(headers)) expect(text).not.toContain(v);
    expect(Object.keys(r).sort()).toEqual(['ok', 'reason']);
  });

  it('the compiled verifier exposes no secret when inspected or serialised', () => {
    const spec = SPECS.github;
    const verify = compileVerifier(spec);
    expect(JSON.stringify({ verify })).not.toContain(spec.secret as string);
    expect(String(verify)).not.toContain(spec.secret as string);
    expect(Object.keys(verify)).toEqual([]);
  });
});

describe('verifySpecIssues() and compile-time errors', () => {
  it('accepts every well-formed spec', () => {
    for (const spec of Object.values(SPECS)) expect(verifySpecIssues(spec)).toEqual([]);
  });

  it('refuses a Standard Webhooks secret that is not base64, without quoting it', () => {
    const issues = verifySpecIssues({ type: 'standard-webhooks', secret: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_not*base64!'] });
    expect(issues).toEqual([{ path: 'secret[1]', message: expect.stringContaining('base64') }]);
    expect(JSON.stringify(issues)).not.toContain('not*base64');
  });

  it.each([
    [{ type: 'github', secret: 's', toleranceSeconds: 60 }, 'toleranceSeconds', 'no timestamp'],
    [{ type: 'hmac-sha256', secret: 's', toleranceSeconds: 60 }, 'toleranceSeconds', 'no timestamp'],
    [{ type: 'stripe', secret: 's', toleranceSeconds: 0 }, 'toleranceSeconds', 'whole number'],
    [{ type: 'slack', secret: 's', toleranceSeconds: 1.5 }, 'toleranceSeconds', 'whole number'],
    [{ type: 'github', secret: [] }, 'secret', 'at least one'],
    [{ type: 'github', secret: '' }, 'secret', 'non-empty'],
    [{ type: 'github', secret: ['ok', ''] }, 'secret[1]', 'non-empty'],
    [{ type: 'github', secret: 's', header: 'bad header' }, 'header', 'header name'],
    [{ type: 'standard-webhooks', secret: 'whsec_' }, 'secret', 'base64'],
    [{ type: 'sha1', secret: 's' }, 'type', 'one of'],
  ] as [VerifySpec, string, string][])('%o → %s', (spec, path, message) => {
    const issues = verifySpecIssues(spec);
    expect(issues).toEqual([{ path, message: expect.stringContaining(message) }]);
    expect(() => compileVerifier(spec)).toThrow(SignatureConfigError);
  });

  it('SignatureConfigError lists every issue by path', () => {
    try {
      compileVerifier({ type: 'github', secret: ['', 'ok'], header: 'a b', toleranceSeconds: 5 });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(SignatureConfigError);
      expect((err as SignatureConfigError).issues.map((i) => i.path)).toEqual(['secret[0]', 'header', 'toleranceSeconds']);
    }
  });
});

describe('compileVerifier() on a real Node request', () => {
  /** Posts `body` with `headers` to a throwaway server and verifies what Node hands over. */
  async function roundTrip(spec: VerifySpec, body: Buffer, headers: Record<string, string>, nowMs: number) {
    const verify = compileVerifier(spec);
    const server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(JSON.stringify(verify(req.headers, Buffer.concat(chunks), nowMs))));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/hooks/x`, { method: 'POST', headers, body });
      return (await res.json()) as unknown;
    } finally {
      await new Promise((r) => server.close(r));
    }
  }

  it.each(VECTORS.map((v) => [v.name, v] as const))('%s, with headers as Node parses them', async (_name, v) => {
    const mixedCase = Object.fromEntries(
      Object.entries(v.headers).map(([k, value]) => [k.replace(/(^|-)([a-z])/g, (m) => m.toUpperCase()), value]),
    );
    expect(await roundTrip(v.spec, buf(v.body), { ...mixedCase, 'content-type': 'application/json' }, v.nowMs)).toEqual({
      ok: true,
      secretIndex: 0,
    });
  });
});

describe('MAC helpers', () => {
  it('macEquals() compares buffers of different lengths without throwing', () => {
    const a = Buffer.alloc(32, 7);
    expect(macEquals(a, Buffer.alloc(32, 7))).toBe(true);
    expect(macEquals(a, Buffer.alloc(31, 7))).toBe(false);
    expect(macEquals(a, Buffer.alloc(33, 7))).toBe(false);
    expect(macEquals(a, Buffer.alloc(0))).toBe(false);
  });

  it('macFromHex() and macFromBase64() only accept exactly 32 bytes', () => {
    expect(macFromHex('00'.repeat(32))?.length).toBe(32);
    expect(macFromHex('00'.repeat(31))).toBeUndefined();
    expect(macFromBase64(Buffer.alloc(32).toString('base64'))?.length).toBe(32);
    expect(macFromBase64(Buffer.alloc(31).toString('base64'))).toBeUndefined();
    expect(macFromBase64(Buffer.alloc(33).toString('base64'))).toBeUndefined();
  });
});
