/** What of a hook request is kept: every header but the credentials, and the URL without its token. */
import { describe, expect, it } from 'vitest';
import { isCredentialHeader } from '../../src/auth/credential-headers.ts';
import { keptHeaders } from '../../src/intake/keep.ts';
import { urlWithoutToken } from '../../src/intake/request.ts';

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

describe('urlWithoutToken()', () => {
  it.each([
    ['/hooks/a', '', '/hooks/a'],
    ['/hooks/a', 'token=secret', '/hooks/a'],
    ['/hooks/a', 'x=1&token=secret&y=2', '/hooks/a?x=1&y=2'],
    // without a token the query stays as it was sent
    ['/hooks/a', 'b=%7E&a=1', '/hooks/a?b=%7E&a=1'],
  ])('%s ? %s → %s', (path, search, url) => {
    expect(urlWithoutToken(path, search ? new URLSearchParams(search) : undefined, search)).toBe(url);
  });
});
