/**
 * The one bearer-token check of `/hooks` and the read API: where the token is
 * looked for, what a failure answers, how failures and successes move the
 * shared throttle, and the deprecated `?token=`. Time is passed in.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { Logger } from 'pino';
import { BearerAuth, QUERY_TOKEN_WARN_MS } from '../../src/auth/bearer.ts';
import { FailureThrottle } from '../../src/auth/throttle.ts';
import { createTokenMatcher } from '../../src/auth/token.ts';
import { errors, HookError } from '../../src/errors.ts';

const TOKEN = 'hk_0123456789abcdef0123456789abcdef';
const expected = createTokenMatcher(TOKEN);
const T0 = 1_000_000;
const WINDOW = 60_000;
const CLIENT = '10.0.0.7';

function setup(opts: { gatewayHeader?: boolean; max?: number; logger?: boolean } = {}) {
  const throttle = new FailureThrottle({ max: opts.max ?? 3, windowMs: WINDOW });
  const warnings: unknown[][] = [];
  const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
  const auth = new BearerAuth({ throttle, gatewayHeader: opts.gatewayHeader ?? true, ...(opts.logger === false ? {} : { logger }) });
  return { auth, throttle, warnings };
}

/** What `fn` throws, as a HookError (fails the test when it returns). */
function thrown(fn: () => unknown): HookError {
  try {
    fn();
  } catch (err) {
    if (err instanceof HookError) return err;
    throw err;
  }
  throw new Error('expected a HookError');
}

const query = (s: string) => new URLSearchParams(s);

describe('BearerAuth.authenticate: where the token is read', () => {
  it('accepts the token in Authorization: Bearer, the scheme in any case, surrounding spaces ignored', () => {
    const { auth } = setup();
    for (const authorization of [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER   ${TOKEN}  `])
      expect(auth.authenticate({ authorization }, expected, CLIENT, T0)).toBe(true);
  });

  it('accepts x-gateway-token where the site reads it, and ignores it where it does not', () => {
    const headers: IncomingHttpHeaders = { 'x-gateway-token': TOKEN };
    expect(setup().auth.authenticate(headers, expected, CLIENT, T0)).toBe(true);
    expect(thrown(() => setup({ gatewayHeader: false }).auth.authenticate(headers, expected, CLIENT, T0)).code).toBe('UNAUTHORIZED');
  });

  it('checks only the first token found: a wrong Bearer token fails even with the right one elsewhere', () => {
    const { auth } = setup();
    const e = thrown(() =>
      auth.authenticate(
        { authorization: 'Bearer wrong', 'x-gateway-token': TOKEN },
        expected,
        CLIENT,
        T0,
        true,
        query(`token=${TOKEN}`),
        true,
        {},
      ),
    );
    expect(e.status).toBe(401);
    expect(e.code).toBe('UNAUTHORIZED');
  });

  it('falls through to x-gateway-token when Authorization is another scheme', () => {
    const { auth } = setup();
    expect(auth.authenticate({ authorization: `Basic ${TOKEN}`, 'x-gateway-token': TOKEN }, expected, CLIENT, T0)).toBe(true);
  });

  it('refuses a missing token, a wrong one, an empty Bearer value, and any token when none is configured', () => {
    const { auth } = setup({ max: 100 });
    for (const headers of [
      {},
      { authorization: 'Bearer nope' },
      { authorization: 'Bearer   ' },
      { 'x-gateway-token': '' },
    ] as IncomingHttpHeaders[]) {
      const e = thrown(() => auth.authenticate(headers, expected, CLIENT, T0));
      expect([e.status, e.code, e.message]).toEqual([401, 'UNAUTHORIZED', 'missing or invalid token']);
    }
    expect(thrown(() => auth.authenticate({ authorization: `Bearer ${TOKEN}` }, undefined, CLIENT, T0)).code).toBe('UNAUTHORIZED');
  });

  it('never puts the presented token in the error', () => {
    const { auth } = setup();
    const e = thrown(() => auth.authenticate({ authorization: 'Bearer s3cret-guess' }, expected, CLIENT, T0));
    expect(JSON.stringify({ m: e.message, h: e.headers })).not.toContain('s3cret-guess');
  });
});

describe('BearerAuth.authenticate: the deprecated ?token=', () => {
  it('accepts it when allowed, marks the answer Deprecation: true and warns once per client per hour, without the token', () => {
    const { auth, warnings } = setup();
    const out: Record<string, string> = {};
    expect(auth.authenticate({}, expected, CLIENT, T0, true, query(`token=${TOKEN}`), true, out)).toBe(true);
    expect(out).toEqual({ Deprecation: 'true' });
    auth.authenticate({}, expected, CLIENT, T0 + QUERY_TOKEN_WARN_MS - 1, true, query(`token=${TOKEN}`), true, {});
    expect(warnings).toHaveLength(1);
    auth.authenticate({}, expected, '10.0.0.8', T0 + 1, true, query(`token=${TOKEN}`), true, {});
    auth.authenticate({}, expected, CLIENT, T0 + QUERY_TOKEN_WARN_MS, true, query(`token=${TOKEN}`), true, {});
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toEqual([{ client: CLIENT }, expect.stringContaining('?token=')]);
    expect(JSON.stringify(warnings)).not.toContain(TOKEN);
  });

  it('refuses it with a message pointing to the header when not allowed, and counts the failure', () => {
    const { auth, throttle } = setup({ max: 1 });
    const e = thrown(() => auth.authenticate({}, expected, CLIENT, T0, true, query(`token=${TOKEN}`), false, {}));
    expect([e.status, e.code]).toEqual([401, 'UNAUTHORIZED']);
    expect(e.message).toBe(errors.queryTokenRefused().message);
    expect(throttle.fail(CLIENT, T0)).toBe(60);
  });

  it('is not looked at when a header carried a token, nor when empty', () => {
    const { auth } = setup();
    const out: Record<string, string> = {};
    expect(auth.authenticate({ authorization: `Bearer ${TOKEN}` }, expected, CLIENT, T0, true, query('token=whatever'), false, out)).toBe(
      true,
    );
    expect(out).toEqual({});
    expect(thrown(() => auth.authenticate({}, expected, CLIENT, T0, true, query('token='), false, out)).message).toBe(
      'missing or invalid token',
    );
  });

  it('is warned about only where a logger was given', () => {
    const { auth } = setup({ logger: false });
    expect(auth.authenticate({}, expected, CLIENT, T0, true, query(`token=${TOKEN}`), true, {})).toBe(true);
  });
});

describe('BearerAuth: the failure throttle', () => {
  it('answers 401 up to the limit, 429 with Retry-After for the failure that crosses it, then 429 before the token is looked at', () => {
    const { auth } = setup({ max: 3 });
    for (let i = 0; i < 3; i++) expect(thrown(() => auth.authenticate({}, expected, CLIENT, T0)).status).toBe(401);
    const crossing = thrown(() => auth.authenticate({}, expected, CLIENT, T0 + 15_000));
    expect([crossing.status, crossing.code, crossing.headers]).toEqual([429, 'RATE_LIMITED', { 'Retry-After': '45' }]);
    const right = thrown(() => auth.authenticate({ authorization: `Bearer ${TOKEN}` }, expected, CLIENT, T0 + 59_999));
    expect([right.status, right.headers]).toEqual([429, { 'Retry-After': '1' }]);
    // another address is not affected, and the window's end unblocks
    expect(auth.authenticate({ authorization: `Bearer ${TOKEN}` }, expected, '10.0.0.9', T0)).toBe(true);
    expect(auth.authenticate({ authorization: `Bearer ${TOKEN}` }, expected, CLIENT, T0 + WINDOW)).toBe(true);
  });

  it('resets the count on a success', () => {
    const { auth } = setup({ max: 3 });
    for (let i = 0; i < 3; i++) thrown(() => auth.authenticate({}, expected, CLIENT, T0));
    auth.authenticate({ authorization: `Bearer ${TOKEN}` }, expected, CLIENT, T0);
    for (let i = 0; i < 3; i++) expect(thrown(() => auth.authenticate({}, expected, CLIENT, T0)).status).toBe(401);
  });

  it('shares the count between sites built on one throttle', () => {
    const throttle = new FailureThrottle({ max: 1, windowMs: WINDOW });
    const hooks = new BearerAuth({ throttle, gatewayHeader: true });
    const api = new BearerAuth({ throttle, gatewayHeader: false });
    expect(thrown(() => hooks.authenticate({}, expected, CLIENT, T0)).status).toBe(401);
    expect(thrown(() => api.authenticate({}, expected, CLIENT, T0)).status).toBe(429);
    expect(thrown(() => hooks.authenticate({ authorization: `Bearer ${TOKEN}` }, expected, CLIENT, T0)).status).toBe(429);
  });
});

describe('BearerAuth: a deferred verdict (required: false)', () => {
  it('returns false for a missing, wrong or refused token without counting it, and without resetting the count', () => {
    const { auth, throttle } = setup({ max: 1 });
    throttle.fail(CLIENT, T0);
    expect(auth.authenticate({}, expected, CLIENT, T0, false)).toBe(false);
    expect(auth.authenticate({ authorization: 'Bearer wrong' }, expected, CLIENT, T0, false)).toBe(false);
    expect(auth.authenticate({}, expected, CLIENT, T0, false, query(`token=${TOKEN}`), false, {})).toBe(false);
    expect(throttle.fail(CLIENT, T0)).toBe(60); // still one failure before this one
  });

  it('still answers 429 while the address is blocked', () => {
    const { auth, throttle } = setup({ max: 1 });
    throttle.fail(CLIENT, T0);
    throttle.fail(CLIENT, T0);
    expect(thrown(() => auth.authenticate({}, expected, CLIENT, T0, false)).status).toBe(429);
  });

  it('takes the later verdict: fail counts (429 when it crosses), succeed resets', () => {
    const { auth } = setup({ max: 1 });
    const sig = errors.invalidSignature();
    expect(auth.fail(CLIENT, T0, sig)).toBe(sig);
    auth.succeed(CLIENT);
    expect(auth.fail(CLIENT, T0, sig)).toBe(sig);
    const crossing = auth.fail(CLIENT, T0, sig);
    expect([crossing.status, crossing.code]).toEqual([429, 'RATE_LIMITED']);
  });
});
