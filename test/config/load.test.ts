/**
 * Loading a config file end to end: finding it, JSON5 and YAML, defaults,
 * line numbers in errors, and the token fallback used by `serve` and `check`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { findConfigFile, loadConfig, parseConfigText } from '../../src/config/load.ts';
import { ConfigError, type ConfigIssue } from '../../src/errors.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';

const root = tempDir('hook-intake-config-');
afterAll(() => cleanup(root));

let n = 0;
/** Writes `text` to a fresh directory and returns the file's path. */
function write(name: string, text: string): string {
  const dir = join(root, String(++n));
  mkdirSync(dir);
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** The issues of the ConfigError `fn` throws. */
function issuesOf(fn: () => unknown): ConfigIssue[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error('expected a ConfigError');
}

const TOKEN = 'h'.repeat(32);

describe('findConfigFile()', () => {
  it('prefers --config, then HOOK_INTAKE_CONFIG, then ./hook-intake.json5', () => {
    const cwd = join(root, 'find');
    mkdirSync(cwd);
    expect(findConfigFile({ cwd, env: {} })).toBeUndefined();
    writeFileSync(join(cwd, 'hook-intake.json5'), '{}');
    expect(findConfigFile({ cwd, env: {} })).toBe(join(cwd, 'hook-intake.json5'));
    expect(findConfigFile({ cwd, env: { HOOK_INTAKE_CONFIG: 'env.yaml' } })).toBe(join(cwd, 'env.yaml'));
    expect(findConfigFile({ cwd, env: { HOOK_INTAKE_CONFIG: 'env.yaml' }, file: 'flag.json' })).toBe(join(cwd, 'flag.json'));
  });
});

describe('loadConfig()', () => {
  it('runs on the embedded defaults when there is no file', () => {
    const cwd = join(root, 'empty');
    mkdirSync(cwd);
    const { file, config } = loadConfig({ cwd, env: {} });
    expect(file).toBeUndefined();
    expect(config.gateway).toMatchObject({ bind: '127.0.0.1', port: 18789 });
    expect(config.gateway.auth.token).toBeUndefined();
    expect(config.hooks).toMatchObject({
      enabled: false,
      path: '/hooks',
      maxBodyBytes: 262144,
      allowQueryToken: true,
      agentStatus: 202,
      allowRequestSessionKey: true,
      presets: [],
      mappings: [],
    });
    expect(config.hooks.token).toBeUndefined();
    expect(config.hooks.allowedSessionKeyPrefixes).toBeUndefined();
    expect(config.hooks.transformsDir).toBe(join(cwd, 'transforms'));
    expect(config.agents.defaults).toMatchObject({ model: 'echo/echo', timeoutSeconds: 600, heartbeat: { every: '30m' } });
    expect(config.agents.defaults.models).toBeUndefined();
    expect(config.agents.providers).toEqual({ echo: { type: 'echo' } });
    expect(config.channels).toEqual({ console: {} });
    expect(config.session.defaultRoute).toBeUndefined();
    expect(config.plugins).toEqual([]);
    expect(config.storage).toMatchObject({ driver: 'sqlite', path: join(cwd, 'data', 'hook-intake.db') });
  });

  it('puts the default database under --data', () => {
    const file = write('c.json', '{}');
    const { config } = loadConfig({ file, cwd: root, env: {}, dataDir: 'state' });
    expect(config.storage).toMatchObject({ path: join(root, 'state', 'hook-intake.db') });
  });

  it('resolves transformsDir and a relative storage.path against the config directory', () => {
    const file = write('c.json5', "{hooks: {transformsDir: 'tx'}, storage: {path: 'db/x.db'}}");
    const { config, dir } = loadConfig({ file, cwd: root, env: {} });
    expect(config.hooks.transformsDir).toBe(join(dir, 'tx'));
    expect(config.storage).toMatchObject({ path: join(dir, 'db/x.db') });
  });

  it("takes the redis driver with its url and its defaults, and names storage.url when it is missing; the url's form is the store's to judge", () => {
    const ok = write('c.json5', "{storage: {driver: 'redis', url: 'unix:///run/redis.sock'}}");
    expect(loadConfig({ file: ok, cwd: root, env: {} }).config.storage).toEqual({
      driver: 'redis',
      url: 'unix:///run/redis.sock',
      prefix: 'hook-intake:',
      instanceTimeoutSeconds: 10,
      timeoutSeconds: 5,
    });
    const missing = write('c.json5', "{storage: {driver: 'redis'}}");
    expect(issuesOf(() => loadConfig({ file: missing, cwd: root, env: {} }))).toEqual([
      expect.objectContaining({ path: 'storage.url', message: expect.stringContaining("the redis driver needs the server's url") }),
    ]);
    // src/store/config.ts judges it when the generation is built (test/store/config.test.ts)
    const bad = write('c.json5', "{storage: {driver: 'redis', url: 'http://localhost:6379'}}");
    expect(loadConfig({ file: bad, cwd: root, env: {} }).config.storage).toMatchObject({ url: 'http://localhost:6379' });
    const stray = write('c.json5', "{storage: {url: 'redis://localhost'}}");
    expect(issuesOf(() => loadConfig({ file: stray, cwd: root, env: {} }))).toEqual([
      expect.objectContaining({ path: 'storage.url', message: 'only the redis driver takes a url (storage.driver is "sqlite")' }),
    ]);
  });

  it("accepts the other driver's keys, as before each driver had its own form, and drops them", () => {
    const sqlite = write('c.json5', "{storage: {path: 'x.db', prefix: 'p:', instanceTimeoutSeconds: 3}}");
    const loaded = loadConfig({ file: sqlite, cwd: root, env: {} });
    expect(loaded.config.storage).toEqual({
      driver: 'sqlite',
      path: join(loaded.dir, 'x.db'),
      synchronous: 'normal',
      locking: 'exclusive',
      timeoutSeconds: 5,
    });
    const redis = write('c.json5', "{storage: {driver: 'redis', url: 'redis://h', path: 'x.db', synchronous: 'full', locking: 'normal'}}");
    expect(loadConfig({ file: redis, cwd: root, env: {} }).config.storage).toEqual({
      driver: 'redis',
      url: 'redis://h',
      prefix: 'hook-intake:',
      instanceTimeoutSeconds: 10,
      timeoutSeconds: 5,
    });
  });

  it('takes storage.timeoutSeconds on both drivers (docs/redis.md, "Timeouts")', () => {
    const sqlite = write('c.json5', '{storage: {timeoutSeconds: 2}}');
    expect(loadConfig({ file: sqlite, cwd: root, env: {} }).config.storage).toMatchObject({ driver: 'sqlite', timeoutSeconds: 2 });
    const redis = write('c.json5', "{storage: {driver: 'redis', url: 'redis://h', timeoutSeconds: 0.5}}");
    expect(loadConfig({ file: redis, cwd: root, env: {} }).config.storage).toMatchObject({ driver: 'redis', timeoutSeconds: 0.5 });
    const zero = write('c.json5', '{storage: {timeoutSeconds: 0}}');
    expect(issuesOf(() => loadConfig({ file: zero, cwd: root, env: {} }))).toEqual([
      expect.objectContaining({ path: 'storage.timeoutSeconds' }),
    ]);
  });

  it("names a key neither driver takes, and a value of the driver's form that is wrong", () => {
    const typo = write('c.json5', "{storage: {pth: 'x.db'}}");
    expect(issuesOf(() => loadConfig({ file: typo, cwd: root, env: {} }))).toEqual([
      expect.objectContaining({ path: 'storage.pth', message: 'unknown key (did you mean "path"?)' }),
    ]);
    const bad = write('c.json5', "{storage: {driver: 'redis', url: 'redis://h', instanceTimeoutSeconds: 0}}");
    expect(issuesOf(() => loadConfig({ file: bad, cwd: root, env: {} }))).toEqual([
      expect.objectContaining({ path: 'storage.instanceTimeoutSeconds', message: 'must be >= 0.5' }),
    ]);
  });

  it('reads JSON5 (comments, unquoted keys, trailing commas)', () => {
    const file = write(
      'c.json5',
      `{
      // a comment
      hooks: { enabled: true, token: '${TOKEN}', },
      gateway: { port: 9000 },
    }`,
    );
    const { config } = loadConfig({ file, cwd: root, env: {} });
    expect(config.hooks.enabled).toBe(true);
    expect(config.hooks.token).toBe(TOKEN);
    expect(config.gateway.port).toBe(9000);
  });

  it.each(['c.yaml', 'c.yml'])('reads YAML from %s', (name) => {
    const file = write(name, `hooks:\n  enabled: true\n  token: ${TOKEN}\ngateway:\n  port: 9001\n`);
    const { config } = loadConfig({ file, cwd: root, env: {} });
    expect(config.hooks.token).toBe(TOKEN);
    expect(config.gateway.port).toBe(9001);
  });

  it('loads the YAML parser only once a YAML file is read', () => {
    // in a process of its own, where nothing else has loaded it
    const probe = join(import.meta.dirname, '../fixtures/yaml-probe.mjs');
    const out = execFileSync(process.execPath, [probe, join(import.meta.dirname, '../../src/config/load.ts')], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ afterJson: false, afterYaml: true });
  });

  it('names the unknown key, its YAML line and a did-you-mean', () => {
    const file = write('c.yaml', `hooks:\n  enabled: true\n  tokn: ${TOKEN}\n  maxBodyBytes: 0\n`);
    const issues = issuesOf(() => loadConfig({ file, cwd: root, env: {} }));
    expect(issues).toContainEqual({ file, path: 'hooks.tokn', line: 3, message: 'unknown key (did you mean "token"?)' });
    expect(issues).toContainEqual(expect.objectContaining({ path: 'hooks.maxBodyBytes', line: 4 }));
  });

  it('gives the line of a rule error in YAML too', () => {
    const file = write('c.yaml', 'agents:\n  defaults:\n    model: nope\n');
    expect(issuesOf(() => loadConfig({ file, cwd: root, env: {} }))).toEqual([
      { file, path: 'agents.defaults.model', line: 3, message: '"nope" must have the form provider/model' },
    ]);
  });

  it('reports an unreadable file and a non-object top level', () => {
    const missing = join(root, 'nope.json');
    expect(issuesOf(() => loadConfig({ file: missing, cwd: root, env: {} }))[0]!.message).toContain('ENOENT');
    const list = write('c.json', '[1, 2]');
    expect(issuesOf(() => loadConfig({ file: list, cwd: root, env: {} }))[0]!.message).toBe(
      'the config must be an object at the top level',
    );
  });

  it('reports a missing ${ENV} with its key path before validating', () => {
    const file = write('c.json5', "{hooks: {enabled: true, token: '${HOOK_TOKEN}'}}");
    expect(issuesOf(() => loadConfig({ file, cwd: root, env: {} }))).toEqual([
      { file, path: 'hooks.token', message: 'environment variable HOOK_TOKEN is not set' },
    ]);
    expect(loadConfig({ file, cwd: root, env: { HOOK_TOKEN: TOKEN } }).config.hooks.token).toBe(TOKEN);
  });

  it('reads a {file} secret relative to the config directory', () => {
    const file = write('c.json5', "{hooks: {enabled: true, token: {file: 'secrets/hook'}}}");
    mkdirSync(join(file, '../secrets'));
    writeFileSync(join(file, '../secrets/hook'), `${TOKEN}\n`);
    expect(loadConfig({ file, cwd: '/', env: {} }).config.hooks.token).toBe(TOKEN);
  });

  it('warns about a short hook token without refusing it', () => {
    const file = write('c.json', JSON.stringify({ hooks: { enabled: true, token: 'short-token' } }));
    const { warnings } = loadConfig({ file, cwd: root, env: {} });
    expect(warnings).toEqual(['hooks.token is shorter than 24 characters; use a long random secret']);
    const long = write('c.json', JSON.stringify({ hooks: { enabled: true, token: TOKEN } }));
    expect(loadConfig({ file: long, cwd: root, env: {} }).warnings).toEqual([]);
  });
});

describe('loadConfig() tokenFallback', () => {
  it('is not asked for a hook token when hooks are disabled or the file sets one', () => {
    const fallback = vi.fn((kind: 'hooks' | 'gateway') => (kind === 'hooks' ? 'f'.repeat(30) : undefined));
    loadConfig({ file: write('c.json', '{}'), cwd: root, env: {}, tokenFallback: fallback });
    loadConfig({
      file: write('c.json', JSON.stringify({ hooks: { enabled: true, token: TOKEN } })),
      cwd: root,
      env: {},
      tokenFallback: fallback,
    });
    expect(fallback.mock.calls.filter(([k]) => k === 'hooks')).toEqual([]);
  });

  it('is not asked for a gateway token the file sets', () => {
    const fallback = vi.fn(() => undefined);
    loadConfig({
      file: write('c.json', JSON.stringify({ gateway: { auth: { token: TOKEN } } })),
      cwd: root,
      env: {},
      tokenFallback: fallback,
    });
    expect(fallback).not.toHaveBeenCalled();
  });

  it('fills the tokens an enabled config lacks and says which ones it filled', () => {
    const file = write('c.json', JSON.stringify({ hooks: { enabled: true } }));
    const loaded = loadConfig({ file, cwd: root, env: {}, tokenFallback: (kind) => `${kind}-${'x'.repeat(30)}` });
    expect(loaded.config.hooks.token).toBe(`hooks-${'x'.repeat(30)}`);
    expect(loaded.config.gateway.auth.token).toBe(`gateway-${'x'.repeat(30)}`);
    expect(loaded.fallbackTokens).toEqual(['hooks', 'gateway']);
  });

  it('does not turn a null section into an empty one', () => {
    const file = write('c.json', JSON.stringify({ hooks: null, gateway: { auth: null } }));
    const issues = issuesOf(() => loadConfig({ file, cwd: root, env: {}, tokenFallback: () => TOKEN }));
    expect(issues.map((i) => `${i.path}: ${i.message}`).sort()).toEqual(['gateway.auth: must be object', 'hooks: must be object']);
  });

  it('leaves hooks.token required when the fallback has none', () => {
    const file = write('c.json', JSON.stringify({ hooks: { enabled: true } }));
    const issues = issuesOf(() => loadConfig({ file, cwd: root, env: {}, tokenFallback: () => undefined }));
    expect(issues).toEqual([{ file, path: 'hooks.token', message: 'required when hooks.enabled is true' }]);
  });
});

describe('parseConfigText()', () => {
  it('gives the line of a JSON5 syntax error', () => {
    const { issues, data } = parseConfigText('{\n  a: 1,\n  b: ,\n}', 'x.json5');
    expect(data).toBeUndefined();
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ file: 'x.json5', path: '', line: 3 });
    expect(issues[0]!.message).toMatch(/^JSON5: /);
  });

  it.each([
    ['a nested compact mapping', 'a: 1\nb: c: d\ne: 1\n', 2],
    ['tab indentation', 'a: 1\n\tb: 2\n', 2],
    ['a duplicate key', 'a: 1\nb: 2\na: 3\n', 3],
  ])('gives the line of a YAML syntax error: %s', (_what, text, line) => {
    const { issues } = parseConfigText(text, 'x.yaml');
    expect(issues.length).toBeGreaterThan(0);
    expect(issues[0]!.message).toMatch(/^YAML: /);
    expect(issues[0]!.line).toBe(line);
  });

  it('parses .json files as JSON5 and maps YAML key paths to lines', () => {
    expect(parseConfigText('{a: 1, /* c */ b: [2,],}', 'x.json').data).toEqual({ a: 1, b: [2] });
    const yaml = parseConfigText('a:\n  b:\n    - x\n    - y\n', 'x.yml');
    expect(yaml.data).toEqual({ a: { b: ['x', 'y'] } });
    expect(yaml.lineOf?.(['a', 'b', 1])).toBe(4);
    expect(yaml.lineOf?.(['a', 'missing'])).toBeUndefined();
  });
});
