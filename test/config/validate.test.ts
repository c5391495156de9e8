/**
 * Schema validation: defaults filled in place, and ajv's errors turned into
 * one readable `key.path: reason` line each.
 */
import { describe, expect, it } from 'vitest';
import { pointerToPath, validateConfig } from '../../src/config/validate.ts';

const problems = (data: unknown) => validateConfig(data, 'cfg.json').issues.map((i) => `${i.path}: ${i.message}`);

describe('validateConfig()', () => {
  it('fills the defaults into the object it is given', () => {
    const data: Record<string, any> = { hooks: { enabled: true, token: 't'.repeat(30) } };
    const { config, issues } = validateConfig(data, 'cfg.json');
    expect(issues).toEqual([]);
    expect(config).toBe(data);
    expect(data.hooks).toMatchObject({
      path: '/hooks',
      maxBodyBytes: 262144,
      agentStatus: 202,
      authFailures: { max: 20, windowSeconds: 60 },
    });
    expect(data.gateway).toMatchObject({ bind: '127.0.0.1', port: 18789, auth: {} });
  });

  it('defaults a mapping action to agent', () => {
    const { config } = validateConfig({ hooks: { mappings: [{ match: { path: 'x' } }] } }, 'cfg.json');
    expect(config!.hooks.mappings[0]!.action).toBe('agent');
  });

  it('returns no config when something is wrong, and names the file', () => {
    const { config, issues } = validateConfig({ gateway: { port: 'x' } }, 'cfg.json');
    expect(config).toBeUndefined();
    expect(issues).toEqual([{ file: 'cfg.json', path: 'gateway.port', message: 'must be integer' }]);
  });

  it.each([
    [{ hooks: { enabledd: true } }, 'hooks.enabledd: unknown key (did you mean "enabled"?)'],
    [{ gateway: { prot: 1 } }, 'gateway.prot: unknown key (did you mean "port"?)'],
    [{ hooks: { mappings: [{ mtach: {} }] } }, 'hooks.mappings[0].mtach: unknown key (did you mean "match"?)'],
    [{ agents: { defaults: { heartbeat: { evry: '1m' } } } }, 'agents.defaults.heartbeat.evry: unknown key (did you mean "every"?)'],
    [{ zzzzzz: 1 }, 'zzzzzz: unknown key'],
    [{ hooks: { mappings: [{ match: { 'a/b': 1 } }] } }, 'hooks.mappings[0].match["a/b"]: unknown key (did you mean "all"?)'],
  ])('names an unknown key and the nearest known one: %j', (data, line) => {
    expect(problems(data)).toEqual([line]);
  });

  it.each([
    [{ hooks: { agentStatus: 201 } }, 'hooks.agentStatus: must be one of 200, 202'],
    [{ hooks: { mappings: [{ action: 'wak' }] } }, 'hooks.mappings[0].action: must be one of "wake", "agent", "deliver"'],
    [
      { agents: { defaults: { thinking: 'max' } } },
      'agents.defaults.thinking: must be one of "off", "minimal", "low", "medium", "high", "xhigh"',
    ],
    [{ storage: { driver: 'mysql' } }, 'storage.driver: must be one of "sqlite", "redis"'],
    [{ gateway: { port: 70000 } }, 'gateway.port: must be <= 65535'],
    [{ hooks: { maxBodyBytes: 0 } }, 'hooks.maxBodyBytes: must be >= 1'],
    [{ agents: { defaults: { heartbeat: { every: '5 minutes' } } } }, 'agents.defaults.heartbeat.every: must match ^(0|[0-9]+(ms|s|m|h))$'],
    [{ agents: { providers: { spare: {} } } }, 'agents.providers.spare: missing required key "type"'],
    [{ hooks: { mappings: [{ id: 'a b' }] } }, 'hooks.mappings[0].id: must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$'],
    [
      { hooks: { mappings: [{ match: { payload: { a: { exsts: true } } } }] } },
      'hooks.mappings[0].match.payload.a: does not match any of the allowed forms',
    ],
  ])('explains a wrong value in one line: %j', (data, line) => {
    expect(problems(data)).toEqual([line]);
  });

  it.each([
    [{ agents: { providers: { Echo: { type: 'echo' } } } }, 'agents.providers.Echo'],
    [{ agents: { providers: { 'no type': {} } } }, 'agents.providers["no type"]'],
    [{ channels: { 'My Chat': {} } }, 'channels["My Chat"]'],
  ])('refuses a provider or channel id outside [a-z0-9_-]: %j', (data, path) => {
    const issues = validateConfig(data, 'cfg.json').issues;
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe(path);
    expect(issues[0]!.message).toContain('^[a-z0-9][a-z0-9_-]*$');
  });

  it('reports every problem, not just the first', () => {
    expect(problems({ gateway: { port: -1 }, hooks: { tokn: 'x', allowQueryToken: 'yes' } })).toEqual(
      expect.arrayContaining([
        'gateway.port: must be >= 0',
        'hooks.tokn: unknown key (did you mean "token"?)',
        'hooks.allowQueryToken: must be boolean',
      ]),
    );
  });
});

describe('hooks.gmail', () => {
  it('refuses an unknown key with the nearest known one', () => {
    expect(problems({ hooks: { gmail: { renewEveryMinute: 60 } } })).toEqual([
      'hooks.gmail.renewEveryMinute: unknown key (did you mean "renewEveryMinutes"?)',
    ]);
    expect(problems({ hooks: { gmail: { serve: { prot: 1 } } } })).toEqual(['hooks.gmail.serve.prot: unknown key (did you mean "port"?)']);
    expect(problems({ hooks: { gmail: { oauth: { refreshTokn: 'x' } } } })).toEqual([
      'hooks.gmail.oauth.refreshTokn: unknown key (did you mean "refreshToken"?)',
    ]);
    expect(problems({ hooks: { gmail: { push: { audiance: 'x' } } } })).toEqual([
      'hooks.gmail.push.audiance: unknown key (did you mean "audience"?)',
    ]);
    expect(problems({ hooks: { gmail: { pull: { maxMesages: 5 } } } })).toEqual([
      'hooks.gmail.pull.maxMesages: unknown key (did you mean "maxMessages"?)',
    ]);
    expect(problems({ hooks: { gmail: { pubsubBaseURL: 'x' } } })).toEqual([
      'hooks.gmail.pubsubBaseURL: unknown key (did you mean "pubsubBaseUrl"?)',
    ]);
  });

  it('fills the defaults', () => {
    const data: Record<string, any> = { hooks: { gmail: { account: 'ops@example.com' } } };
    expect(validateConfig(data, 'cfg.json').issues).toEqual([]);
    expect(data.hooks.gmail).toEqual({
      account: 'ops@example.com',
      label: 'INBOX',
      mode: 'push',
      includeBody: true,
      maxBytes: 20000,
      renewEveryMinutes: 720,
      serve: { bind: '127.0.0.1', port: 8788, path: '/gmail-pubsub' },
      pull: { maxMessages: 10 },
      apiBaseUrl: 'https://gmail.googleapis.com',
      pubsubBaseUrl: 'https://pubsub.googleapis.com',
      tokenUrl: 'https://oauth2.googleapis.com/token',
      jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs',
      authUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
    });
  });

  it('accepts every documented key', () => {
    const gmail = {
      account: 'ops@example.com',
      label: 'Alerts',
      mode: 'pull',
      topic: 'projects/p/topics/gmail',
      subscription: 'projects/p/subscriptions/gmail-push',
      pushToken: 'push-token',
      hookUrl: 'http://127.0.0.1:18789/hooks/gmail',
      includeBody: false,
      maxBytes: 5000,
      renewEveryMinutes: 60,
      serve: { bind: '0.0.0.0', port: 9000, path: '/push' },
      pull: { maxMessages: 50 },
      oauth: { clientId: 'id.apps.googleusercontent.com', clientSecret: 'secret', refreshToken: 'refresh' },
      push: { audience: 'https://hooks.example.com/push', serviceAccountEmail: 'push@p.iam.gserviceaccount.com' },
      apiBaseUrl: 'http://127.0.0.1:1/gmail',
      pubsubBaseUrl: 'http://127.0.0.1:1/pubsub',
      tokenUrl: 'http://127.0.0.1:1/token',
      jwksUrl: 'http://127.0.0.1:1/certs',
      authUrl: 'http://127.0.0.1:1/auth',
      model: 'echo/echo',
      allowUnsafeExternalContent: false,
    };
    expect(problems({ hooks: { gmail } })).toEqual([]);
  });

  it.each([
    [{ maxBytes: 0 }, 'hooks.gmail.maxBytes: must be >= 1'],
    [{ renewEveryMinutes: 20000 }, 'hooks.gmail.renewEveryMinutes: must be <= 10080'],
    [{ includeBody: 'yes' }, 'hooks.gmail.includeBody: must be boolean'],
    [{ serve: { port: 70000 } }, 'hooks.gmail.serve.port: must be <= 65535'],
    [{ serve: { path: 'gmail-pubsub' } }, 'hooks.gmail.serve.path: must match ^/'],
    [{ tokenUrl: 'oauth2.googleapis.com/token' }, 'hooks.gmail.tokenUrl: must match ^https?://'],
    [{ mode: 'poll' }, 'hooks.gmail.mode: must be one of "push", "pull"'],
    [{ pull: { maxMessages: 0 } }, 'hooks.gmail.pull.maxMessages: must be >= 1'],
  ])('explains a wrong value in one line: %j', (gmail, line) => {
    expect(problems({ hooks: { gmail } })).toEqual([line]);
  });
});

describe('pointerToPath()', () => {
  it.each([
    ['', []],
    ['/hooks/mappings/0/id', ['hooks', 'mappings', 0, 'id']],
    ['/channels/a~1b/x~0y', ['channels', 'a/b', 'x~y']],
  ])('%j → %j', (pointer, path) => {
    expect(pointerToPath(pointer)).toEqual(path);
  });
});
