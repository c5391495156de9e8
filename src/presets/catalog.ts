/**
 * Every preset a configuration can enable: the built-in ones (`presets/`) and those its plugins add,
 * for `hook-intake presets` and `sources add` (docs/presets.md).
 */
import type { LoadedConfig } from '../config/load.ts';
import type { ConfigIssue } from '../errors.ts';
import type { PresetDefinition } from '../plugins/define.ts';
import { loadPluginModule, pluginPath } from '../plugins/load.ts';
import { BUILTIN_PRESETS_DIR, loadPresetsDir } from './load.ts';

export interface CatalogEntry {
  name: string;
  def: PresetDefinition;
  /** `built in`, or the plugin file that adds it. */
  origin: string;
}

/** The presets, built-in first, each plugin's after in config order; a plugin that does not load is an issue. */
export async function presetCatalog(
  loaded: (Pick<LoadedConfig, 'file' | 'dir'> & { config: { plugins: readonly string[] } }) | undefined,
  dir = BUILTIN_PRESETS_DIR,
): Promise<{ presets: CatalogEntry[]; issues: ConfigIssue[] }> {
  const builtin = loadPresetsDir(dir);
  const issues = [...builtin.issues];
  const presets: CatalogEntry[] = [...builtin.presets].map(([name, def]) => ({ name, def, origin: 'built in' }));
  for (const [i, entry] of (loaded?.config.plugins ?? []).entries()) {
    const file = pluginPath(loaded!.dir, entry);
    try {
      const plugin = await loadPluginModule(file);
      for (const [name, def] of Object.entries(plugin.presets ?? {})) presets.push({ name, def, origin: file });
    } catch (err) {
      issues.push({ file: loaded!.file ?? '(embedded defaults)', path: `plugins[${i}]`, message: `${entry}: ${(err as Error).message}` });
    }
  }
  return { presets: presets.sort((a, b) => (a.origin === b.origin ? a.name.localeCompare(b.name) : 0)), issues };
}
