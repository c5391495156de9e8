/**
 * The credential step: the mapping that owns a named hook's request, its signature or the hook token
 * checked, and what a caller without a valid credential is told.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGeneration } from '../../src/generation/build.ts';
import type { Generation } from '../../src/generation/types.ts';
import { authorize } from '../../src/intake/credential.ts';
import { resolve } from '../../src/intake/resolve.ts';
import { HookError } from '../../src/errors.ts';
import { signatureHeaders } from '../../src/auth/signing.ts';
import type { HookRequest } from '../../src/intake/request.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { captureLogger, testConfig } from '../helpers/runtime.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';

const dir = tempDir('hook-intake-credential-');
let gen: Generation;
let strict: Generation;
let signed: Generation;
const SECRET = 'gh-secret-0123456789';
const { logger } = captureLogger('silent');

beforeAll(async () => {
  const build = (mappings: unknown[], presets: string[] = []) =>
    buildGeneration(
      testConfig({ hooks: { enabled: true, token: 'hook-token-0123456789abcdef0123', transformsDir: dir, presets, mappings } }, dir),
      {
        builtins: builtinPlugins,
        logger,
      },
    );
  gen = await build(
    [
      {
        id: 'issues',
        match: { path: 'github', headers: { 'x-github-event': 'issues' } },
        action: 'wake',
        textTemplate: 'issue {{action}}',
      },
      { id: 'github-any', match: { path: 'github' }, action: 'wake', textTemplate: 'github {{action}}' },
      { id: 'mail-override', match: { path: 'gmail', payload: { account: 'vip@example.com' } }, action: 'wake', textTemplate: 'vip mail' },
      { id: 'form', match: { source: 'form' }, action: 'wake', textTemplate: 'form {{email}}' },
      { id: 'fallback', action: 'wake', textTemplate: 'fallback for {{path}}' },
    ],
    ['gmail'],
  );
  strict = await build([{ id: 'only', match: { path: 'only' }, action: 'wake' }], ['gmail']);
  signed = await build([
    {
      id: 'gh-push',
      match: { path: 'gh', headers: { 'x-github-event': 'push' } },
      action: 'wake',
      verify: { type: 'github', secret: SECRET },
    },
  ]);
});
afterAll(async () => {
  await gen.dispose();
  await strict.dispose();
  await signed.dispose();
  cleanup(dir);
});

const req = (name: string, payload: unknown = {}, headers: Record<string, string> = {}): HookRequest => ({
  name,
  payload,
  headers,
  query: {},
  path: `/hooks/${name}`,
  url: `/hooks/${name}`,
  rawBody: Buffer.from('{}'),
  receivedAt: 0,
  authenticated: true,
});

describe('authorize()', () => {
  const run = (g: Generation, r: HookRequest) => resolve(g, r, authorize(g, r, logger), logger);

  it('runs the pipeline that owns the request', async () => {
    const r = await run(gen, req('github', { action: 'opened' }, { 'x-github-event': 'issues' }));
    expect(r.kind === 'actions' && r.actions[0]!.origin).toBe('issues');
    expect(r.kind === 'actions' && r.actions[0]!.kind === 'wake' && r.actions[0]!.text).toContain('\nissue opened\n');
  });

  it('answers 404 HOOK_NOT_FOUND when nothing matches', () => {
    const err = thrown(() => authorize(strict, req('github'), logger));
    expect(err).toBeInstanceOf(HookError);
    expect(err).toMatchObject({ status: 404, code: 'HOOK_NOT_FOUND', message: 'no hook mapping matches "github"' });
  });

  describe('a signed mapping', () => {
    const body = Buffer.from('{"zen":"Keep it logically awesome."}');
    const signedReq = (event: string, headers: Record<string, string>): HookRequest => ({
      ...req('gh', JSON.parse(body.toString()), { 'x-github-event': event, ...headers }),
      rawBody: body,
      authenticated: false,
    });
    const valid = signatureHeaders({ type: 'github', secret: SECRET }, body, 0);
    const forged = signatureHeaders({ type: 'github', secret: 'not-the-secret' }, body, 0);

    it('owns a request with its valid signature, without the token', () => {
      expect(authorize(signed, signedReq('push', valid), logger)?.id).toBe('gh-push');
    });

    it('tells a validly signed request that nothing matches (404), not that its credential is wrong', () => {
      const err = thrown(() => authorize(signed, signedReq('issues', valid), logger));
      expect(err).toMatchObject({ status: 404, code: 'HOOK_NOT_FOUND' });
      expect((err as Error).message).toBe(
        'the signature is valid for mapping "gh-push", but no mapping\'s match accepts this request to "gh"',
      );
    });

    it('still answers 401 to an unmatched request with no valid credential, and to a signature for another path', () => {
      for (const r of [signedReq('issues', {}), signedReq('issues', forged), { ...signedReq('issues', valid), name: 'elsewhere' }]) {
        expect(thrown(() => authorize(signed, r, logger))).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
      }
    });

    // docs/mappings.md, "GitHub's ping"
    it('answers a verified GitHub ping 204 though the mapping matches push alone', () => {
      const ping = signedReq('ping', valid);
      expect(authorize(signed, ping, logger)?.id).toBe('gh-push');
      expect(ping.answer).toEqual({ status: 204, body: {} });
      expect(thrown(() => authorize(signed, signedReq('ping', forged), logger))).toMatchObject({ status: 401 });
    });

    it('refuses a matched request without its signature, the token notwithstanding', () => {
      for (const r of [signedReq('push', {}), signedReq('push', forged), { ...signedReq('push', {}), authenticated: true }]) {
        expect(thrown(() => authorize(signed, r, logger))).toMatchObject({ status: 401, code: 'INVALID_SIGNATURE' });
      }
    });
  });
});

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error('did not throw');
}
