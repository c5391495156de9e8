/**
 * Which failures without an answer chat-request.ts counts as never sent (an
 * ordinary retry) rather than possibly posted (ambiguous).
 */
import { describe, expect, it } from 'vitest';
import { neverSent } from '../../src/plugin-api/chat-request.ts';

const fetchFailed = (cause: unknown): Error => new TypeError('fetch failed', { cause });
const coded = (code: string, cause?: unknown): Error => Object.assign(new Error(code, cause ? { cause } : undefined), { code });

describe('neverSent()', () => {
  it.each([
    'ECONNREFUSED',
    'ENOTFOUND',
    'UND_ERR_CONNECT_TIMEOUT',
    'CERT_HAS_EXPIRED',
    'ERR_TLS_CERT_ALTNAME_INVALID',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  ])('%s before the request left is never sent', (code) => {
    expect(neverSent(fetchFailed(coded(code)))).toBe(true);
  });

  it('finds the code further down the cause chain', () => {
    expect(neverSent(fetchFailed(new Error('connect failed', { cause: coded('UNABLE_TO_VERIFY_LEAF_SIGNATURE') })))).toBe(true);
  });

  it('a reset or an unknown failure may have been sent', () => {
    expect(neverSent(fetchFailed(coded('ECONNRESET')))).toBe(false);
    expect(neverSent(fetchFailed(coded('UND_ERR_SOCKET')))).toBe(false);
    expect(neverSent(new Error('boom'))).toBe(false);
  });
});
