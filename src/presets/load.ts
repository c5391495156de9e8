/**
 * Built-in presets: each folder of `presets/` with a `preset.json5` (or
 * `.yaml`) file holding `{ mappings: [...] }`; its transforms resolve inside
 * that folder. Read at every generation build, so edits hot-reload.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { Type } from '@sinclair/typebox';
import type { ConfigIssue } from '../errors.ts';
import { Mapping, type MappingConfig } from '../config/schema.ts';
import { compile } from '../config/ajv.ts';
import { parseConfigText } from '../config/load.ts';
import { translateAjvErrors } from '../config/validate.ts';
import type { PresetDefinition } from '../plugins/define.ts';
import { PACKAGE_ROOT } from '../package-root.ts';

export const BUILTIN_PRESETS_DIR = join(PACKAGE_ROOT, 'presets');
const PRESET_FILES = ['preset.json5', 'preset.json', 'preset.yaml', 'preset.yml'];

const PresetFile = Type.Object(
  { description: Type.Optional(Type.String()), mappings: Type.Array(Mapping, { minItems: 1 }) },
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
    if (!entry.isDirectory()) continue;
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
    const data = parsed.data as { mappings: MappingConfig[] };
    presets.set(entry.name, { mappings: data.mappings, transformsDir: folder, file: name });
  }
  return { presets, issues, files };
}
