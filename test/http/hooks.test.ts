/**
 * The /hooks listener's own pieces: how a request target is split, which
 * client address the throttle counts, and which paths belong to the hooks.
 * The listener's answers over real HTTP are in test/e2e/hooks-contract.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { clientAddress, isHookPath, target } from '../../src/http/target.ts';
import { testGeneration } from '../helpers/runtime.ts';

describe('target()', () => {
  it.each([
    ['/hooks/wake', '/hooks/wake', undefined],
    ['/hooks/wake?token=abc&x=1', '/hooks/wake', 'token=abc&x=1'],
    ['/hooks/wake#frag', '/hooks/wake', undefined],
    ['/hooks/wake?x=1#frag', '/hooks/wake', 'x=1'],
    ['http://example.com/hooks/agent?x=2', '/hooks/agent', 'x=2'],
    ['*', '*', undefined],
  ])('splits %s into path %s and query %s', (url, path, query) => {
    const t = target(url);
    expect(t.path).toBe(path);
    expect(t.query?.toString()).toBe(query);
    expect(t.search).toBe(query ?? '');
  });
});

describe('clientAddress()', () => {
  const req = (xff: string | string[] | undefined) =>
    ({ headers: { 'x-forwarded-for': xff }, socket: { remoteAddress: '10.0.0.9' } }) as never;

  it('is the socket peer unless the proxy is trusted', () => {
    expect(clientAddress(req('203.0.113.7'), false)).toBe('10.0.0.9');
  });

  it('is the address the nearest trusted proxy appended, not one the client wrote', () => {
    expect(clientAddress(req('198.51.100.1, 203.0.113.7'), true)).toBe('203.0.113.7');
    expect(clientAddress(req(['198.51.100.1', '203.0.113.8']), true)).toBe('203.0.113.8');
  });

  it('falls back to the socket peer when a trusted proxy sent no address', () => {
    expect(clientAddress(req(undefined), true)).toBe('10.0.0.9');
    expect(clientAddress(req(' , '), true)).toBe('10.0.0.9');
  });
});

describe('isHookPath()', () => {
  const gen = testGeneration({ hooks: { enabled: true, token: 'hook-token-0123456789abcdef', path: '/in' } });

  it.each([
    ['/in', true],
    ['/in/wake', true],
    ['/in/a/b', true],
    ['/inbox', false],
    ['/api/status', false],
    ['/', false],
  ])('%s → %s', (path, expected) => {
    expect(isHookPath(gen, path)).toBe(expected);
  });

  it('is false for every path while hooks are disabled', () => {
    expect(isHookPath(testGeneration({}), '/hooks/wake')).toBe(false);
  });
});
