/**
 * The callbacks of a config (docs/callbacks.md, "Config"): which callbacks get an event of a type from a
 * hook, and the config errors, each naming its key.
 */
import { describe, expect, it } from 'vitest';
import { builtinPlugins } from '../../plugins/index.ts';
import { ConfigError } from '../../src/errors.ts';
import { buildGeneration } from '../../src/generation/build.ts';
import type { Generation } from '../../src/generation/types.ts';
import { createLogger } from '../../src/log.ts';
import { callbackSecret } from '../helpers/callback-receiver.ts';
import { testConfig } from '../helpers/runtime.ts';

const SECRET = callbackSecret();

const callback = (id: string, over: Record<string, unknown> = {}) => ({
  id,
  url: `https://${id}.example.com/events`,
  secret: SECRET,
  types: ['run.completed', 'run.failed'],
  ...over,
});

const build = (callbacks: unknown[], mappings: unknown[] = [], presets: unknown[] = []): Promise<Generation> =>
  buildGeneration(testConfig({ hooks: { enabled: true, token: 'hook-token-0123456789abcdef0123', mappings, presets }, callbacks }), {
    builtins: builtinPlugins,
    logger: createLogger('silent'),
  });

/** The config errors of a build, as `path: message` lines. */
async function problems(callbacks: unknown[], mappings: unknown[] = []): Promise<string[]> {
  const err = await build(callbacks, mappings).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ConfigError)) throw new Error('expected a config error');
  return err.issues.map((i) => `${i.path}: ${i.message}`);
}

const ids = (gen: Generation, hook: string, type: Parameters<Generation['callbacks']['targets']>[1]) =>
  gen.callbacks.targets(hook, type).map((c) => c.id);

describe('compileCallbacks()', () => {
  it('with none configured, wants nothing and names no target', async () => {
    const gen = await build([]);
    expect(gen.callbacks.wants('run.completed')).toBe(false);
    expect(gen.callbacks.targets('agent', 'run.completed')).toEqual([]);
  });

  it("sends every hook's events to a callback without hooks, only the listed hooks' to one with, and only its types", async () => {
    const gen = await build(
      [
        callback('all'),
        callback('github-only', { hooks: ['github'], types: ['run.completed', 'request.rejected'] }),
        callback('rejections', { types: ['request.rejected'] }),
      ],
      [],
      [{ name: 'github', secret: 'github-secret-0123456789' }],
    );
    expect(ids(gen, 'agent', 'run.completed')).toEqual(['all']);
    expect(ids(gen, 'github', 'run.completed')).toEqual(['all', 'github-only']);
    expect(ids(gen, 'github', 'run.failed')).toEqual(['all']);
    expect(ids(gen, 'wake', 'request.rejected')).toEqual(['rejections']);
    expect(ids(gen, 'github', 'request.rejected')).toEqual(['github-only', 'rejections']);
    expect(gen.callbacks.wants('delivery.failed')).toBe(false);
    expect(gen.callbacks.wants('request.rejected')).toBe(true);
  });

  it("adds the callbacks a mapping names to its own hook's events; hooks: [] gets only those", async () => {
    const gen = await build(
      [callback('ci', { hooks: [] }), callback('ops', { hooks: ['agent'] })],
      [
        { id: 'deploys', match: { path: 'deploys' }, messageTemplate: 'x', callbacks: ['ci', 'ops'] },
        { id: 'other', match: { path: 'other' }, messageTemplate: 'x' },
      ],
    );
    expect(ids(gen, 'deploys', 'run.completed')).toEqual(['ci', 'ops']);
    expect(ids(gen, 'other', 'run.completed')).toEqual([]);
    expect(ids(gen, 'agent', 'run.failed')).toEqual(['ops']);
  });

  it('decodes the secret, with or without its whsec_ prefix, and keeps the URL parsed', async () => {
    const gen = await build([
      callback('a'),
      callback('b', { secret: SECRET.slice(6), url: 'http://127.0.0.1:9/x?y=1', allowPrivateNetwork: true }),
    ]);
    expect(gen.callbacks.get('a')!.key).toEqual(Buffer.alloc(32, 7));
    expect(gen.callbacks.get('b')!.key).toEqual(Buffer.alloc(32, 7));
    expect(gen.callbacks.get('b')!.url.href).toBe('http://127.0.0.1:9/x?y=1');
    expect(gen.callbacks.get('b')!.allowPrivateNetwork).toBe(true);
    expect(gen.callbacks.get('a')!.allowPrivateNetwork).toBe(false);
  });

  it.each([
    [
      'an unknown hook, with the nearest',
      [callback('a', { hooks: ['deplys'] })],
      [],
      'callbacks[0].hooks[0]: "deplys" is not a hook: agent, wake or a mapping\'s id (did you mean "deploys"?)',
    ],
    ['a duplicate id', [callback('a'), callback('a')], [], 'callbacks[1].id: duplicate callback id "a"'],
    [
      'a secret that is not base64',
      [callback('a', { secret: 'whsec_not base64!' })],
      [],
      'callbacks[0].secret: is not a Standard Webhooks secret',
    ],
    [
      'a secret too short',
      [callback('a', { secret: `whsec_${Buffer.alloc(16).toString('base64')}` })],
      [],
      'callbacks[0].secret: must hold 24 to 64 bytes once decoded, not 16',
    ],
    [
      'a user in the URL',
      [callback('a', { url: 'https://me:pw@a.example.com/' })],
      [],
      'callbacks[0].url: must not hold a user or password',
    ],
    [
      "a mapping's unknown callback",
      [callback('ci')],
      [{ id: 'builds', match: { path: 'builds' }, messageTemplate: 'x', callbacks: ['cj'] }],
      'hooks.mappings[1].callbacks[0]: no callback has the id "cj" (did you mean "ci"?) (mapping "builds")',
    ],
  ])('refuses %s', async (_, callbacks, mappings, expected) => {
    const lines = await problems(callbacks, [{ id: 'deploys', match: { path: 'deploys' }, messageTemplate: 'x' }, ...mappings]);
    expect(lines).toContainEqual(expect.stringContaining(expected));
  });

  it.each([
    [{ types: ['run.complete'] }, 'callbacks[0].types[0]'],
    [{ types: [] }, 'callbacks[0].types'],
    [{ url: 'ftp://x' }, 'callbacks[0].url'],
    [{ hook: ['agent'] }, 'callbacks[0].hook: unknown key (did you mean "hooks"?)'],
  ])('refuses %j by the schema, naming the key', (over, message) => {
    expect(() => testConfig({ callbacks: [callback('a', over)] })).toThrow(message);
  });
});
