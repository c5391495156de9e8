/**
 * User plugins named in the `plugins` config key: JS/TS modules loaded with
 * jiti (no build step), re-evaluated at every generation build so an edited
 * plugin takes effect on reload. The default export (or `plugin`) must be a
 * `definePlugin({...})` object.
 */
import { existsSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileInChild } from './compiler.ts';
import type { Plugin } from './define.ts';

/**
 * Lets a plugin anywhere on disk import the public API (and TypeBox through it) from this
 * installation: the modules this code runs, `.js` in the compiled `dist/`, `.ts` in the sources.
 */
const ext = extname(import.meta.filename);
const PLUGIN_ALIASES = {
  'hook-intake': fileURLToPath(new URL(`../index${ext}`, import.meta.url)),
  'hook-intake/plugin': fileURLToPath(new URL(`./define${ext}`, import.meta.url)),
  'hook-intake/transform': fileURLToPath(new URL(`../transforms/types${ext}`, import.meta.url)),
};

export async function loadPluginModule(file: string): Promise<Plugin> {
  if (!existsSync(file)) throw new Error(`file not found: ${file}`);
  // Loaded only when a plugin is configured (jiti is large). A fresh instance
  // without module cache, and never Node's native loader (its module cache
  // cannot be cleared in this thread), so a reload evaluates the current file.
  // What jiti's file cache lacks is compiled in a child process, so jiti's
  // compiler (~20 MB) does not stay in this one (compiler.ts).
  const { createJiti } = await import('jiti');
  const jiti = createJiti(import.meta.url, {
    moduleCache: false,
    requireCache: false,
    tryNative: false,
    alias: PLUGIN_ALIASES,
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
