import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGeneration } from '../../src/generation/build.ts';
import type { Generation } from '../../src/generation/types.ts';
import { explainMatch, findPipeline } from '../../src/mapping/find.ts';
import type { HookRequest } from '../../src/intake/request.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { captureLogger, testConfig } from '../helpers/runtime.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';

const dir = tempDir('hook-intake-resolve-');
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

describe('findPipeline()', () => {
  it.each([
    ['the first of two matching mappings', req('github', {}, { 'x-github-event': 'issues' }), 'issues'],
    ['the next one when the first does not match', req('github', {}, { 'x-github-event': 'push' }), 'github-any'],
    ['a match by payload.source on any path', req('contact', { source: 'form' }), 'form'],
    ['a user mapping before the preset on the same path', req('gmail', { account: 'vip@example.com', messages: [] }), 'mail-override'],
    ['the catch-all before a preset', req('gmail', { account: 'other@example.com', messages: [] }), 'fallback'],
    ['the catch-all for an unknown name', req('anything'), 'fallback'],
  ])('picks %s', (_what, r, id) => {
    expect(findPipeline(gen, r)?.id).toBe(id);
  });

  it('finds nothing when no match passes', () => {
    expect(findPipeline(strict, req('github'))).toBeUndefined();
  });
});

describe('explainMatch()', () => {
  it('lists every earlier pipeline with its reason, then the one that matched, and stops there', () => {
    expect(explainMatch(gen, req('contact', { source: 'form' }))).toEqual([
      { id: 'issues', origin: 'hooks.mappings[0]', matched: false, reason: 'match.path: wants "github", got "contact"' },
      { id: 'github-any', origin: 'hooks.mappings[1]', matched: false, reason: 'match.path: wants "github", got "contact"' },
      { id: 'mail-override', origin: 'hooks.mappings[2]', matched: false, reason: 'match.path: wants "gmail", got "contact"' },
      { id: 'form', origin: 'hooks.mappings[3]', matched: true },
    ]);
  });

  it('gives the reason of a failed header rule', () => {
    expect(explainMatch(gen, req('github', {}, { 'x-github-event': 'push' })).slice(0, 2)).toEqual([
      {
        id: 'issues',
        origin: 'hooks.mappings[0]',
        matched: false,
        reason: 'match.headers["x-github-event"]: wants a value that equals "issues", got "push"',
      },
      { id: 'github-any', origin: 'hooks.mappings[1]', matched: true },
    ]);
  });

  it('agrees with findPipeline()', () => {
    for (const r of [
      req('github', {}, { 'x-github-event': 'issues' }),
      req('gmail', { account: 'a' }),
      req('x', { source: 'form' }),
      req('zzz'),
    ]) {
      const walk = explainMatch(gen, r);
      expect(walk.filter((e) => e.matched).map((e) => e.id)).toEqual([findPipeline(gen, r)!.id]);
      expect(walk.at(-1)!.matched).toBe(true);
    }
  });

  it('lists every pipeline, none matched, when nothing matches', () => {
    expect(explainMatch(strict, req('github'))).toEqual([
      { id: 'only', origin: 'hooks.mappings[0]', matched: false, reason: 'match.path: wants "only", got "github"' },
      { id: 'gmail', origin: 'preset gmail (mappings[0])', matched: false, reason: 'match.path: wants "gmail", got "github"' },
    ]);
  });
});
