/**
 * The compile step (docs/mappings.md, "A mapping", "Order and the first match" and "Presets"): config
 * mappings then enabled presets become frozen pipelines, in order; every problem is an issue with the
 * file and the key path, and a mapping with a problem is left out.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compilePipelines, DEFAULT_TRANSFORM_TIMEOUT_MS, type PresetSource } from '../../src/mapping/compile.ts';
import type { MappingConfig } from '../../src/config/schema.ts';
import { loadPresetsDir } from '../../src/presets/load.ts';
import { cleanup, tempDir } from '../helpers/cli.ts';
import { testConfig } from '../helpers/runtime.ts';
import { createRegistry } from '../../src/plugins/registry.ts';
import { signatureVerifiers } from '../../src/auth/verifiers.ts';
import { createInstanceMaker } from '../../src/generation/instances.ts';
import { createLogger } from '../../src/log.ts';

const dir = realpathSync(tempDir('hook-intake-compile-'));
const transformsDir = join(dir, 'transforms');
mkdirSync(join(transformsDir, 'sub'), { recursive: true });
writeFileSync(join(transformsDir, 'shape.ts'), 'export default () => undefined;');
writeFileSync(join(transformsDir, 'sub', 'other.js'), 'export default () => undefined;');
const presetDir = join(dir, 'preset-x');
mkdirSync(presetDir);
writeFileSync(join(presetDir, 'own.ts'), 'export default () => null;');
afterAll(() => cleanup(dir));

/** Compiles `mappings` (and `presets`) under a config with `extra` merged into `hooks`. */
function compile(
  mappings: unknown[],
  opts: { presets?: PresetSource[]; hooks?: Record<string, unknown>; top?: Record<string, unknown> } = {},
) {
  const { config } = testConfig({ ...opts.top, hooks: { transformsDir, ...opts.hooks, mappings } }, dir);
  const registry = createRegistry();
  registry.register(signatureVerifiers);
  const deps = { logger: createLogger('silent'), fetch, env: {}, clock: Date.now, configDir: dir };
  const { verifier } = createInstanceMaker(registry, 'cfg.json5', [], deps);
  return compilePipelines({ config, file: 'cfg.json5', presets: opts.presets ?? [], verifier });
}
/** The issues as `file: path: message` lines. */
const issuesOf = (mappings: unknown[], opts?: Parameters<typeof compile>[1]) =>
  compile(mappings, opts).issues.map((i) => `${i.file}: ${i.path}: ${i.message}`);

const presetA: PresetSource = {
  name: 'alpha',
  file: '/presets/alpha/preset.json5',
  mappings: [{ match: { path: 'shared' }, action: 'wake', textTemplate: 'alpha' } as MappingConfig],
};
const presetB: PresetSource = {
  name: 'beta',
  mappings: [{ id: 'beta-one', match: { path: 'b' }, action: 'agent' } as MappingConfig, { action: 'wake' } as MappingConfig],
};

describe('compilePipelines()', () => {
  describe('order', () => {
    it('puts user mappings first, then presets in hooks.presets order', () => {
      const { pipelines, issues } = compile([{ id: 'mine', match: { path: 'shared' } }, { match: { source: 'form' } }], {
        presets: [presetB, presetA],
      });
      expect(issues).toEqual([]);
      expect(pipelines.map((p) => [p.id, p.origin])).toEqual([
        ['mine', 'hooks.mappings[0]'],
        ['mapping-2', 'hooks.mappings[1]'],
        ['beta-one', 'preset beta (mappings[0])'],
        ['beta-2', 'preset beta (mappings[1])'],
        ['alpha-1', 'preset alpha (mappings[0])'],
      ]);
    });

    it('compiles a mapping without match as a catch-all', () => {
      const [p] = compile([{ id: 'all', action: 'wake' }]).pipelines;
      expect(p!.path).toBeUndefined();
      expect(p!.matcher.test({ name: 'anything', headers: {}, payload: null })).toBe(true);
    });

    it('records match.path without slashes', () => {
      expect(compile([{ match: { path: '/ci/build/' } }]).pipelines[0]!.path).toBe('ci/build');
    });
  });

  it('freezes what it compiles', () => {
    const [p] = compile([{ id: 'f', match: { path: 'f' }, messageTemplate: 'x', deliver: false }]).pipelines;
    expect(Object.isFrozen(p)).toBe(true);
    expect(Object.isFrozen(p!.templates)).toBe(true);
    expect(Object.isFrozen(p!.statics)).toBe(true);
  });

  it('copies the settings that are not templated and compiles the templated fields', () => {
    const [p] = compile([
      {
        id: 'full',
        match: { path: 'full' },
        action: 'agent',
        wakeMode: 'next-heartbeat',
        deliver: false,
        channel: 'console',
        timeoutSeconds: 30,
        name: 'Full {{path}}',
        sessionKey: 'hook:{{id}}',
        messageTemplate: 'm',
        textTemplate: 't',
        to: '{{to}}',
        model: 'echo/echo',
        thinking: 'low',
        label: 'CI',
        allowUnsafeExternalContent: true,
        rateLimit: { max: 5, perSeconds: 60 },
      },
    ]).pipelines;
    expect(p!.statics).toEqual({ wakeMode: 'next-heartbeat', deliver: false, channel: 'console', timeoutSeconds: 30 });
    expect(Object.keys(p!.templates).sort()).toEqual(['messageTemplate', 'model', 'name', 'sessionKey', 'textTemplate', 'thinking', 'to']);
    expect(p!.label).toBe('CI');
    expect(p!.trusted).toBe(true);
    expect(p!.rateLimit).toEqual({ max: 5, perSeconds: 60 });
    expect(p!.transform).toBeUndefined();
    expect(p!.forEach).toBeUndefined();
  });

  describe('problems, each with the file and the key path', () => {
    it.each<[string, unknown, string]>([
      [
        'match.path "wake"',
        { id: 'w', match: { path: 'wake' } },
        'hooks.mappings[0].match.path: "wake" is reserved for the built-in endpoint (mapping "w")',
      ],
      [
        'match.path "/agent/"',
        { id: 'a', match: { path: '/agent/' } },
        'hooks.mappings[0].match.path: "agent" is reserved for the built-in endpoint (mapping "a")',
      ],
      [
        'an invalid regex',
        { id: 're', match: { payload: { x: { regex: '(' } } } },
        'hooks.mappings[0].match.payload["x"].regex: invalid regular expression',
      ],
      [
        'a template error',
        { id: 't', messageTemplate: 'Hi {{name' },
        'hooks.mappings[0].messageTemplate: unclosed "{{" at 4 (mapping "t")',
      ],
      [
        'a prototype segment in a template',
        { id: 'p', sessionKey: 'hook:{{payload.__proto__.x}}' },
        'hooks.mappings[0].sessionKey: {{payload.__proto__.x}}: "__proto__" is not allowed in a path (mapping "p")',
      ],
      [
        'forEach with a nested path',
        { id: 'fe', forEach: 'data.items' },
        'hooks.mappings[0].forEach: must name a top-level field of the payload, not a path (mapping "fe")',
      ],
      [
        'forEach naming a prototype',
        { id: 'fp', forEach: '__proto__' },
        'hooks.mappings[0].forEach: "__proto__" is not allowed in a path (mapping "fp")',
      ],
      [
        'an unknown channel',
        { id: 'c', channel: 'telegram' },
        'hooks.mappings[0].channel: "telegram" is not "last" or a configured channel (mapping "c")',
      ],
      [
        'a model without provider',
        { id: 'm', model: 'gpt' },
        'hooks.mappings[0].model: "gpt" must have the form provider/model (mapping "m")',
      ],
      [
        'a model of an unconfigured provider',
        { id: 'm', model: 'openai/gpt-5' },
        'hooks.mappings[0].model: provider "openai" is not configured under agents.providers (mapping "m")',
      ],
      [
        'an unknown thinking level',
        { id: 'th', thinking: 'extreme' },
        'hooks.mappings[0].thinking: "extreme" is not one of off, minimal, low, medium, high, xhigh (mapping "th")',
      ],
      [
        'a transform outside the directory',
        { id: 'x', transform: { module: '../shape.ts' } },
        'hooks.mappings[0].transform.module: "../shape.ts" must not contain ".."',
      ],
      ['a missing transform', { id: 'x', transform: { module: 'gone' } }, 'hooks.mappings[0].transform.module: "gone" not found in'],
      [
        'an unknown verifier type',
        { id: 'v', verify: { type: 'githb', secret: 's' } },
        'hooks.mappings[0].verify.type: unknown verifier type "githb" (did you mean "github"?); known: github, stripe, slack, standard-webhooks, hmac-sha256, shopify, sentry, pagerduty, jira, typeform, intercom, linear, calendly, paddle, zoom, telegram, discord, meta, mattermost, gitlab, postmark, twilio, hubspot, sendgrid, mailgun (mapping "v")',
      ],
      [
        'a verifier option it does not know',
        { id: 'v', verify: { type: 'github', secret: 's', secrte: 't' } },
        'hooks.mappings[0].verify.secrte: unknown key (did you mean "secret"?) (mapping "v")',
      ],
      [
        'a verifier option it refuses',
        { id: 'v', verify: { type: 'github', secret: 's', toleranceSeconds: 60 } },
        'hooks.mappings[0].verify.toleranceSeconds: has no effect: github signatures carry no timestamp (mapping "v")',
      ],
      ['a missing secret', { id: 'v', verify: { type: 'slack' } }, 'hooks.mappings[0].verify: missing required key "secret" (mapping "v")'],
    ])('%s', (_what, mapping, line) => {
      const { pipelines, issues } = compile([mapping]);
      expect(pipelines).toEqual([]);
      expect(issues).toHaveLength(1);
      expect(`${issues[0]!.path}: ${issues[0]!.message}`).toContain(line);
      expect(issues[0]!.file).toBe('cfg.json5');
    });

    it('checks the model against agents.defaults.models when set', () => {
      const top = { agents: { defaults: { models: ['echo/echo'] }, providers: { echo: { type: 'echo' }, other: { type: 'echo' } } } };
      expect(issuesOf([{ id: 'm', model: 'other/x' }], { top })).toEqual([
        'cfg.json5: hooks.mappings[0].model: "other/x" is not in agents.defaults.models (mapping "m")',
      ]);
      expect(issuesOf([{ id: 'm', model: 'echo/echo' }], { top })).toEqual([]);
    });

    it('accepts "last" and configured channels, and leaves templated models and thinking to run time', () => {
      expect(
        issuesOf([{ channel: 'last' }, { channel: 'console' }, { model: '{{model}}' }, { thinking: '{{level}}' }, { model: 'echo/{{m}}' }]),
      ).toEqual([]);
    });

    it('reports every problem of every mapping, and keeps the good mappings', () => {
      const { pipelines, issues } = compile([
        { id: 'bad', match: { path: 'wake' }, channel: 'nope', messageTemplate: '{{}}' },
        { id: 'good', match: { path: 'good' } },
        { id: 'bad2', thinking: 'loud' },
      ]);
      expect(pipelines.map((p) => p.id)).toEqual(['good']);
      expect(issues.map((i) => i.path)).toEqual([
        'hooks.mappings[0].match.path',
        'hooks.mappings[0].messageTemplate',
        'hooks.mappings[0].channel',
        'hooks.mappings[2].thinking',
      ]);
    });

    it('names the preset file and the path inside it for a preset mapping', () => {
      const broken: PresetSource = {
        name: 'broken',
        file: '/presets/broken/preset.json5',
        mappings: [{ id: 'b', match: { path: 'agent' }, messageTemplate: '{{x' } as MappingConfig],
      };
      expect(issuesOf([], { presets: [broken] })).toEqual([
        '/presets/broken/preset.json5: mappings[0].match.path: "agent" is reserved for the built-in endpoint (mapping "b")',
        '/presets/broken/preset.json5: mappings[0].messageTemplate: unclosed "{{" at 1 (mapping "b")',
      ]);
    });
  });

  describe('transforms', () => {
    it('resolves the module in hooks.transformsDir, with the default deadline', () => {
      const { pipelines, transforms } = compile([{ id: 't', transform: { module: 'shape.ts' } }]);
      expect(pipelines[0]!.transform).toEqual({
        key: `${join(transformsDir, 'shape.ts')}#`,
        file: join(transformsDir, 'shape.ts'),
        timeoutMs: DEFAULT_TRANSFORM_TIMEOUT_MS,
      });
      expect(DEFAULT_TRANSFORM_TIMEOUT_MS).toBe(5000);
      expect(transforms).toEqual([{ key: `${join(transformsDir, 'shape.ts')}#`, file: join(transformsDir, 'shape.ts') }]);
    });

    it('shares one loaded module between mappings that name the same file and export', () => {
      const { pipelines, transforms } = compile([
        { id: 'a', transform: { module: 'shape.ts' } },
        { id: 'b', transform: { module: 'shape', timeoutMs: 100 } },
        { id: 'c', transform: { module: './shape.ts', export: 'other' } },
        { id: 'd', transform: { module: 'sub/other' } },
      ]);
      expect(transforms.map((t) => t.key)).toEqual([
        `${join(transformsDir, 'shape.ts')}#`,
        `${join(transformsDir, 'shape.ts')}#other`,
        `${join(transformsDir, 'sub/other.js')}#`,
      ]);
      expect(transforms[1]!.exportName).toBe('other');
      expect(pipelines[0]!.transform!.key).toBe(pipelines[1]!.transform!.key);
      expect(pipelines[1]!.transform!.timeoutMs).toBe(100);
    });

    it("resolves a preset's modules in the preset's own directory", () => {
      const own: PresetSource = {
        name: 'own',
        transformsDir: presetDir,
        mappings: [{ match: { path: 'own' }, transform: { module: 'own.ts' } } as MappingConfig],
      };
      const { pipelines, issues } = compile([], { presets: [own] });
      expect(issues).toEqual([]);
      expect(pipelines[0]!.transform!.file).toBe(join(presetDir, 'own.ts'));
      // and not in hooks.transformsDir
      const elsewhere: PresetSource = {
        name: 'own',
        transformsDir: presetDir,
        mappings: [{ transform: { module: 'shape.ts' } } as MappingConfig],
      };
      expect(compile([], { presets: [elsewhere] }).issues[0]!.message).toContain('not found');
    });
  });

  describe('the gmail preset', () => {
    const gmail = loadPresetsDir().presets.get('gmail')!;
    const source: PresetSource = { name: 'gmail', mappings: gmail.mappings!, file: gmail.file! };

    it('compiles to one agent action per message, each in a session of its own, with the source Email', () => {
      const { pipelines, issues } = compile([], { presets: [source] });
      expect(issues).toEqual([]);
      const p = pipelines[0]!;
      expect(p).toMatchObject({
        id: 'gmail',
        path: 'gmail',
        action: 'agent',
        label: 'Email',
        trusted: false,
        forEach: { field: 'messages' },
      });
      expect(p.templates.sessionKey!.source).toBe('hook:gmail:{{messages[0].id}}');
    });

    it('applies hooks.gmail.model and hooks.gmail.allowUnsafeExternalContent to it', () => {
      const top = { agents: { providers: { echo: { type: 'echo' }, fast: { type: 'echo' } } } };
      const { pipelines, issues } = compile([], {
        presets: [source],
        top,
        hooks: { gmail: { model: 'fast/mini', allowUnsafeExternalContent: true } },
      });
      expect(issues).toEqual([]);
      expect(pipelines[0]!.trusted).toBe(true);
      expect(pipelines[0]!.templates.model!.source).toBe('fast/mini');
    });

    it('checks the overriding model like any mapping model, naming the preset file', () => {
      const issues = issuesOf([], { presets: [source], hooks: { gmail: { model: 'nope/x' } } });
      expect(issues).toEqual([
        `${gmail.file}: mappings[0].model: provider "nope" is not configured under agents.providers (mapping "gmail")`,
      ]);
    });

    it('comes after a user mapping that claims the same path', () => {
      const { pipelines } = compile([{ id: 'my-gmail', match: { path: 'gmail' }, action: 'wake' }], { presets: [source] });
      expect(pipelines.map((p) => p.id)).toEqual(['my-gmail', 'gmail']);
    });
  });
});
