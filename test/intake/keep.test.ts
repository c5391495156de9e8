/** What of a hook request is kept: every header but the credentials, and the URL without its token. */
import { describe, expect, it } from 'vitest';
import { isCredentialHeader, keptHeaders, keptUrl } from '../../src/intake/keep.ts';

describe('isCredentialHeader()', () => {
  it.each([
    'authorization',
    'proxy-authorization',
    'cookie',
    'set-cookie',
    'x-gateway-token',
    'x-gitlab-token',
    'x-hub-signature',
    'x-hub-signature-256',
    'x-slack-signature',
    'stripe-signature',
    'webhook-signature',
    'x-signature-ed25519',
    'x-signature-timestamp-signature',
    'x-telegram-bot-api-secret-token',
    'x-goog-channel-token',
    'x-goog-iap-jwt-assertion',
    'x-api-key',
    'x-apikey',
    'x-auth-user',
    'x-webhook-secret',
    'x-password',
  ])('%s is a credential', (name) => {
    expect(isCredentialHeader(name, new Set())).toBe(true);
  });

  it.each([
    'content-type',
    'user-agent',
    'x-github-event',
    'x-github-delivery',
    'x-slack-request-timestamp',
    'webhook-id',
    'webhook-timestamp',
    'x-request-id',
    'x-forwarded-for',
  ])('%s is kept', (name) => {
    expect(isCredentialHeader(name, new Set())).toBe(false);
  });

  it('a header a mapping takes its signature from is a credential too', () => {
    expect(isCredentialHeader('x-my-mac', new Set(['x-my-mac']))).toBe(true);
  });
});

describe('keptHeaders()', () => {
  it('keeps the rest, a repeated header joined', () => {
    expect(
      keptHeaders({ 'x-a': ['1', '2'], authorization: 'Bearer t', 'content-type': 'application/json', 'x-mac': 'abc' }, new Set(['x-mac'])),
    ).toEqual({
      'x-a': '1, 2',
      'content-type': 'application/json',
    });
  });
});

describe('keptUrl()', () => {
  it.each([
    ['/hooks/a', undefined, '/hooks/a'],
    ['/hooks/a', new URLSearchParams('token=secret'), '/hooks/a'],
    ['/hooks/a', new URLSearchParams('x=1&token=secret&y=2'), '/hooks/a?x=1&y=2'],
  ])('%s %s → %s', (path, query, url) => {
    expect(keptUrl(path, query)).toBe(url);
  });
});
