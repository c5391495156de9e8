/**
 * User plugins named in the `plugins` config key: JS/TS modules loaded with
 * jiti (no build step), re-evaluated at every generation build so an edited
 * plugin takes effect on reload. The default export (or `plugin`) must be a
 * `definePlugin({...})` object.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import * as rootApi from '../index.ts';
import * as pluginApi from '../plugin-api/index.ts';
import * as transformApi from '../transforms/types.ts';
import { compileInChild } from './compiler.ts';
import type { Plugin } from './define.ts';

/**
 * What a plugin anywhere on disk gets when it imports the public API by name: the modules the
 * service itself runs on (jiti's `virtualModules`), so its `ChannelError` is the service's own
 * class, and nothing of the API is compiled or evaluated again at each load.
 */
const PLUGIN_API = { 'hook-intake': rootApi, 'hook-intake/plugin': pluginApi, 'hook-intake/transform': transformApi };

export async function loadPluginModule(file: string): Promise<Plugin> {
  if (!existsSync(file)) throw new Error(`file not found: ${file}`);
  // Loaded only when a plugin is configured (jiti is large). A fresh instance
  // without module cache, and never Node's native loader (its module cache
  // cannot be cleared in this thread), so a reload evaluates the current file.
  // What jiti's file cache lacks is compiled in a child process, so jiti's
  // compiler does not stay in this one (compiler.ts; measured: docs/performance.md, "Memory").
  const { createJiti } = await import('jiti');
  const jiti = createJiti(import.meta.url, {
    moduleCache: false,
    requireCache: false,
    tryNative: false,
    virtualModules: PLUGIN_API,
    transform: (opts) => compileInChild(opts),
  });
  const mod = (await jiti.import(file)) as { default?: unknown; plugin?: unknown };
  const p = (mod.default ?? mod.plugin ?? mod) as Partial<Plugin>;
  if (!p || typeof p !== 'object' || typeof p.name !== 'string' || !p.name)
    throw new Error('the module must export a plugin object with a "name" (use definePlugin)');
  return p as Plugin;
}

export function pluginPath(configDir: string, entry: string): string {
  return resolve(configDir, entry);
}
