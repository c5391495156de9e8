/**
 * The rules a schema cannot express: normalisation and cross-key checks,
 * applied to an already validated config.
 */
import { describe, expect, it } from 'vitest';
import { applyRules, normaliseHooksPath, splitModel } from '../../src/config/rules.ts';
import { validateConfig } from '../../src/config/validate.ts';
import type { Config } from '../../src/config/schema.ts';

const TOKEN = 'h'.repeat(32);

/** Validates `data`, applies the rules, returns the config, `path: message` lines and warnings. */
function rules(data: Record<string, unknown>) {
  const { config, issues } = validateConfig(structuredClone(data), 'cfg.json');
  expect(issues).toEqual([]);
  const warnings: string[] = [];
  const problems = applyRules(config!, { file: 'cfg.json', dir: '/etc/hi', cwd: '/srv', dataDir: '/srv/data', warnings });
  return { config: config as Config, problems: problems.map((i) => `${i.path}: ${i.message}`), warnings };
}

describe('normaliseHooksPath()', () => {
  it.each([
    ['/hooks', '/hooks'],
    ['hooks', '/hooks'],
    ['/hooks/', '/hooks'],
    ['hooks//', '/hooks'],
    [' /hooks ', '/hooks'],
    ['/in/bound', '/in/bound'],
    ['/', undefined],
    ['', undefined],
    ['//hooks', undefined],
    ['/ho oks', undefined],
    ['/hooks?x=1', undefined],
  ])('%j → %j', (input, expected) => {
    expect(normaliseHooksPath(input)).toBe(expected);
  });
});

describe('splitModel()', () => {
  it.each([
    ['echo/echo', { provider: 'echo', model: 'echo' }],
    ['openai/gpt-4o', { provider: 'openai', model: 'gpt-4o' }],
    ['local/org/model:7b', { provider: 'local', model: 'org/model:7b' }],
    ['echo', undefined],
    ['/echo', undefined],
    ['echo/', undefined],
  ])('%j → %j', (input, expected) => {
    expect(splitModel(input)).toEqual(expected);
  });
});

describe('applyRules()', () => {
  describe('hooks.path', () => {
    it.each([
      ['hooks', '/hooks'],
      ['/hooks/', '/hooks'],
      ['/in', '/in'],
    ])('stores %j as %j', (path, expected) => {
      const { config, problems } = rules({ hooks: { path } });
      expect(problems).toEqual([]);
      expect(config.hooks.path).toBe(expected);
    });

    it.each([
      ['/', 'hooks.path: "/" is not a usable path prefix (use e.g. "/hooks"; "/" alone is not allowed)'],
      ['/api', 'hooks.path: "/api" collides with a built-in endpoint (/api, /ui, /healthz, /readyz, /metrics)'],
      ['api/hooks', 'hooks.path: "/api/hooks" collides with a built-in endpoint (/api, /ui, /healthz, /readyz, /metrics)'],
      ['/healthz', 'hooks.path: "/healthz" collides with a built-in endpoint (/api, /ui, /healthz, /readyz, /metrics)'],
      ['/ui/hooks', 'hooks.path: "/ui/hooks" collides with a built-in endpoint (/api, /ui, /healthz, /readyz, /metrics)'],
    ])('refuses %j', (path, line) => {
      expect(rules({ hooks: { path } }).problems).toEqual([line]);
    });

    it('accepts a prefix that only starts with the letters of a built-in one', () => {
      expect(rules({ hooks: { path: '/apihooks' } }).config.hooks.path).toBe('/apihooks');
    });
  });

  describe('tokens', () => {
    it('requires hooks.token when hooks are enabled', () => {
      expect(rules({ hooks: { enabled: true } }).problems).toEqual(['hooks.token: required when hooks.enabled is true']);
      expect(rules({ hooks: { enabled: false } }).problems).toEqual([]);
    });

    it('refuses a hook token equal to the gateway token', () => {
      expect(rules({ hooks: { enabled: true, token: TOKEN }, gateway: { auth: { token: TOKEN } } }).problems).toEqual([
        'hooks.token: must differ from gateway.auth.token (use a separate secret for hooks)',
      ]);
      expect(rules({ hooks: { enabled: true, token: TOKEN }, gateway: { auth: { token: `${TOKEN}x` } } }).problems).toEqual([]);
    });

    it.each([
      ['x'.repeat(23), 1],
      ['x'.repeat(24), 0],
    ])('warns about a short hook token (%j)', (token, count) => {
      const { problems, warnings } = rules({ hooks: { enabled: true, token } });
      expect(problems).toEqual([]);
      expect(warnings).toHaveLength(count);
      if (count) expect(warnings[0]).toContain('hooks.token is shorter than 24 characters');
    });

    it('says nothing about the token of disabled hooks', () => {
      expect(rules({ hooks: { enabled: false, token: 'x' } }).warnings).toEqual([]);
    });
  });

  describe('models', () => {
    it.each([
      [{ model: 'echo' }, 'agents.defaults.model: "echo" must have the form provider/model'],
      [{ model: 'openai/gpt-4o' }, 'agents.defaults.model: provider "openai" is not configured under agents.providers'],
      [{ models: ['echo/a', 'nope/b'] }, 'agents.defaults.models[1]: provider "nope" is not configured under agents.providers'],
      [{ models: ['echo/a', 'bad'] }, 'agents.defaults.models[1]: "bad" must have the form provider/model'],
    ])('checks provider/model: %j', (defaults, line) => {
      expect(rules({ agents: { defaults } }).problems).toEqual([line]);
    });

    it('accepts models of every configured provider', () => {
      const agents = {
        defaults: { model: 'spare/x', models: ['echo/echo', 'spare/y'] },
        providers: { echo: { type: 'echo' }, spare: { type: 'echo' } },
      };
      expect(rules({ agents }).problems).toEqual([]);
    });

    it('does not treat an inherited property as a configured provider', () => {
      expect(rules({ agents: { defaults: { model: 'constructor/x' } } }).problems).toEqual([
        'agents.defaults.model: provider "constructor" is not configured under agents.providers',
      ]);
    });
  });

  describe('channels and routes', () => {
    it('requires session.defaultRoute.channel to be a configured channel', () => {
      expect(rules({ session: { defaultRoute: { channel: 'telegram', to: '1' } } }).problems).toEqual([
        'session.defaultRoute.channel: channel "telegram" is not configured under channels',
      ]);
      expect(rules({ session: { defaultRoute: { channel: 'console' } } }).problems).toEqual([]);
    });

    it('reserves the channel id "last"', () => {
      expect(rules({ channels: { last: { type: 'console' } } }).problems).toEqual([
        'channels.last: "last" is reserved (it means the main route)',
      ]);
    });
  });

  describe('paths', () => {
    it('resolves transformsDir against the config directory and the default database into the data dir', () => {
      const { config } = rules({});
      expect(config.hooks.transformsDir).toBe('/etc/hi/transforms');
      expect(config.storage).toMatchObject({ path: '/srv/data/hook-intake.db' });
    });

    it('keeps an absolute storage.path and resolves a relative one against the config directory', () => {
      expect(rules({ storage: { path: '/var/lib/hi.db' } }).config.storage).toMatchObject({ path: '/var/lib/hi.db' });
      expect(rules({ storage: { path: 'db/hi.db' }, hooks: { transformsDir: '../tx' } }).config).toMatchObject({
        storage: { path: '/etc/hi/db/hi.db' },
        hooks: { transformsDir: '/etc/tx' },
      });
    });
  });

  describe('mapping ids', () => {
    it('numbers mappings without an id from 1, by position', () => {
      const { config } = rules({ hooks: { mappings: [{}, { id: 'github' }, {}] } });
      expect(config.hooks.mappings.map((m) => m.id)).toEqual(['mapping-1', 'github', 'mapping-3']);
    });

    it('refuses duplicate ids, including a clash with a defaulted one', () => {
      expect(rules({ hooks: { mappings: [{ id: 'a' }, { id: 'a' }] } }).problems).toEqual([
        'hooks.mappings[1].id: duplicate mapping id "a"',
      ]);
      expect(rules({ hooks: { mappings: [{ id: 'mapping-2' }, {}] } }).problems).toEqual([
        'hooks.mappings[1].id: duplicate mapping id "mapping-2"',
      ]);
    });
  });

  it('reports every broken rule at once', () => {
    const { problems } = rules({ hooks: { enabled: true, path: '/' }, agents: { defaults: { model: 'xyz' } } });
    expect(problems).toHaveLength(3);
  });
});
