/**
 * Preset folders (docs/mappings.md, "Presets"): each folder of a presets directory with a
 * `preset.json5` / `.json` / `.yaml` / `.yml` holding `{mappings}` is a preset
 * named after the folder; problems name the file and the key path.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILTIN_PRESETS_DIR, loadPresetsDir } from '../../src/presets/load.ts';
import { cleanup, ROOT, tempDir } from '../helpers/cli.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanup));

/** A presets directory with `files` (path → content). */
function presets(files: Record<string, string>): string {
  const dir = tempDir('hook-intake-presets-');
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('loadPresetsDir()', () => {
  it('loads the built-in gmail preset from presets/', () => {
    expect(BUILTIN_PRESETS_DIR).toBe(join(ROOT, 'presets'));
    const { presets: loaded, issues, files } = loadPresetsDir();
    expect(issues).toEqual([]);
    expect(files).toContain(join(ROOT, 'presets/gmail/preset.json5'));
    const gmail = loaded.get('gmail')!;
    expect(gmail.transformsDir).toBe(join(ROOT, 'presets/gmail'));
    expect(gmail.file).toBe(join(ROOT, 'presets/gmail/preset.json5'));
    expect(gmail.mappings).toEqual([
      {
        id: 'gmail',
        match: { path: 'gmail' },
        action: 'agent',
        name: 'Gmail',
        label: 'Email',
        forEach: 'messages',
        sessionKey: 'hook:gmail:{{messages[0].id}}',
        messageTemplate: 'New email from {{from}}\nSubject: {{subject}}\n{{snippet}}\n{{body}}',
      },
    ]);
  });

  it('reads JSON5, JSON and YAML preset files, names each after its folder and fills defaults', () => {
    const dir = presets({
      'alpha/preset.json5': `{ mappings: [{ match: { path: 'alpha' }, textTemplate: 'a' }] } // comment`,
      'beta/preset.json': `{ "description": "b", "mappings": [{ "id": "b", "action": "wake" }] }`,
      'gamma/preset.yaml': `mappings:\n  - id: g\n    match: { path: gamma }\n`,
      'delta/preset.yml': `mappings:\n  - id: d\n`,
    });
    const { presets: loaded, issues, files } = loadPresetsDir(dir);
    expect(issues).toEqual([]);
    expect([...loaded.keys()].sort()).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    expect(loaded.get('alpha')!.mappings![0]).toEqual({ match: { path: 'alpha' }, textTemplate: 'a', action: 'agent' });
    expect(loaded.get('beta')!.mappings![0]!.action).toBe('wake');
    expect(loaded.get('gamma')!.transformsDir).toBe(join(dir, 'gamma'));
    expect(files.sort()).toEqual(
      ['alpha/preset.json5', 'beta/preset.json', 'delta/preset.yml', 'gamma/preset.yaml'].map((f) => join(dir, f)),
    );
  });

  it('skips folders without a preset file and files at the top level', () => {
    const dir = presets({
      'empty/readme.md': '# nothing',
      'loose.json5': '{ mappings: [{}] }',
      'ok/preset.json5': '{ mappings: [{ id: "ok" }] }',
    });
    expect([...loadPresetsDir(dir).presets.keys()]).toEqual(['ok']);
  });

  it('returns nothing for a directory that does not exist', () => {
    expect(loadPresetsDir('/nonexistent/hook-intake-presets')).toEqual({ presets: new Map(), issues: [], files: [] });
  });

  it('reports a syntax error with the file, and keeps the other presets', () => {
    const dir = presets({ 'bad/preset.json5': '{ mappings: [ ', 'good/preset.json5': '{ mappings: [{ id: "g" }] }' });
    const { presets: loaded, issues } = loadPresetsDir(dir);
    expect([...loaded.keys()]).toEqual(['good']);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.file).toBe(join(dir, 'bad/preset.json5'));
  });

  it.each([
    [
      'an unknown key in a mapping',
      '{ mappings: [{ id: "x", messageTemplat: "typo" }] }',
      'mappings[0].messageTemplat',
      /did you mean "messageTemplate"/,
    ],
    ['an unknown top-level key', '{ mappings: [{ id: "x" }], extra: 1 }', 'extra', /unknown key/],
    ['no mappings', '{ mappings: [] }', 'mappings', /^must NOT have fewer than 1 items$/],
    ['an unknown action', '{ mappings: [{ action: "email" }] }', 'mappings[0].action', /^must be one of "wake", "agent", "deliver"$/],
  ])('reports %s with the key path', (_what, text, path, message) => {
    const dir = presets({ 'p/preset.json5': text });
    const { presets: loaded, issues } = loadPresetsDir(dir);
    expect(loaded.size).toBe(0);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ file: join(dir, 'p/preset.json5'), path });
    expect(issues[0]!.message).toMatch(message);
  });

  it('prefers preset.json5 when a folder has several preset files', () => {
    const dir = presets({ 'p/preset.json5': '{ mappings: [{ id: "from-json5" }] }', 'p/preset.yaml': 'mappings:\n  - id: from-yaml\n' });
    expect(loadPresetsDir(dir).presets.get('p')!.mappings![0]!.id).toBe('from-json5');
  });
});
