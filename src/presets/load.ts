/**
 * Built-in presets (docs/presets.md): each folder of `presets/` with a `preset.json5` (or `.yaml`)
 * file, holding either `{ mappings: [...] }` or a source preset (its scheme, event and delivery-id
 * templates, and a transform); its transforms resolve inside that folder. A folder whose name starts
 * with `_` holds code the presets share, not a preset. Read at every generation build, so edits
 * hot-reload.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { Type } from '@sinclair/typebox';
import type { ConfigIssue } from '../errors.ts';
import { Mapping } from '../config/schema.ts';
import { compile } from '../config/ajv.ts';
import { parseConfigText } from '../config/load.ts';
import { translateAjvErrors } from '../config/validate.ts';
import type { PresetDefinition } from '../plugins/define.ts';
import { PACKAGE_ROOT } from '../package-root.ts';

export const BUILTIN_PRESETS_DIR = join(PACKAGE_ROOT, 'presets');
const PRESET_FILES = ['preset.json5', 'preset.json', 'preset.yaml', 'preset.yml'];

const Template = Type.String({ minLength: 1 });
const PresetFile = Type.Object(
  {
    description: Type.Optional(Type.String()),
    mappings: Type.Optional(Type.Array(Mapping, { minItems: 1 })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 80 })),
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 80 })),
    verify: Type.Optional(Type.String({ minLength: 1 })),
    verifyOptions: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    event: Type.Optional(Template),
    events: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    idempotencyKey: Type.Optional(Template),
    transform: Type.Optional(Type.String({ minLength: 1 })),
    action: Type.Optional(Type.Union([Type.Literal('agent'), Type.Literal('wake')])),
    sample: Type.Optional(
      Type.Object(
        { payload: Type.String({ minLength: 1 }), headers: Type.Optional(Type.Record(Type.String(), Type.String())) },
        { additionalProperties: false },
      ),
    ),
    setup: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  },
  { additionalProperties: false },
);
let validate: ValidateFunction | undefined;

export interface LoadedPresets {
  presets: Map<string, PresetDefinition>;
  issues: ConfigIssue[];
  /** Files read, for the watcher. */
  files: string[];
}

export function loadPresetsDir(dir: string = BUILTIN_PRESETS_DIR): LoadedPresets {
  const presets = new Map<string, PresetDefinition>();
  const issues: ConfigIssue[] = [];
  const files: string[] = [];
  if (!existsSync(dir)) return { presets, issues, files };
  validate ??= compile(PresetFile);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('_')) continue;
    const folder = join(dir, entry.name);
    const name = PRESET_FILES.map((f) => join(folder, f)).find((f) => existsSync(f));
    if (!name) continue;
    files.push(name);
    const parsed = parseConfigText(readFileSync(name, 'utf8'), name);
    if (parsed.issues.length) {
      issues.push(...parsed.issues);
      continue;
    }
    if (!validate(parsed.data)) {
      issues.push(...translateAjvErrors(validate.errors ?? [], name, PresetFile));
      continue;
    }
    const data = parsed.data as Omit<PresetDefinition, 'file' | 'transformsDir'>;
    if ((data.mappings === undefined) === (data.transform === undefined)) {
      issues.push({ file: name, path: '', message: 'a preset has either `mappings` or a `transform` (a source preset), not both' });
      continue;
    }
    presets.set(entry.name, { ...data, transformsDir: folder, file: name });
  }
  return { presets, issues, files };
}
