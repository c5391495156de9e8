/**
 * User plugins named in the `plugins` config key: JS/TS modules loaded with
 * jiti (no build step), re-evaluated at every generation build so an edited
 * plugin takes effect on reload. The default export (or `plugin`) must be a
 * `definePlugin({...})` object.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Plugin } from './define.ts';

export async function loadPluginModule(file: string): Promise<Plugin> {
  if (!existsSync(file)) throw new Error(`file not found: ${file}`);
  // loaded only when a plugin is configured (jiti is large); a fresh instance
  // without module cache, so reloads see the current file
  const { createJiti } = await import('jiti');
  const jiti = createJiti(import.meta.url, { moduleCache: false, requireCache: false });
  const mod = (await jiti.import(file)) as { default?: unknown; plugin?: unknown };
  const p = (mod.default ?? mod.plugin ?? mod) as Partial<Plugin>;
  if (!p || typeof p !== 'object' || typeof p.name !== 'string' || !p.name)
    throw new Error('the module must export a plugin object with a "name" (use definePlugin)');
  return p as Plugin;
}

export function pluginPath(configDir: string, entry: string): string {
  return resolve(configDir, entry);
}
