/**
 * The built-in plugins are written as a third party would write them (docs/plugins.md): a plugin's
 * code imports `hook-intake/plugin`, Node's built-in modules, the package's declared dependencies
 * and files of its own folder, nothing else; its tests may add the dev dependencies and the test
 * helpers, never the service's sources. So the public API is proven by the plugins that use it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { init, parse } from 'es-module-lexer';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';

const PLUGINS = join(ROOT, 'plugins');
const HELPERS = join(ROOT, 'test', 'helpers');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** Every module specifier `source` imports or re-exports, type-only ones included, and dynamic imports' (null when not a plain string). */
function importsOf(source: string): (string | null)[] {
  // the lexer reads `import type` but not `export type … from`; as far as imports go, the two forms are the same
  const [imports] = parse(source.replace(/\bexport\s+type\s*(?=[{*])/g, 'export '));
  return imports.filter((i) => i.t !== 3 /* import.meta */).map((i) => i.n ?? null);
}

/** The package a bare specifier names: `@scope/name` or `name`, without a subpath. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** `plugins/<name>` for a file of that plugin; `plugins` for plugins/index.ts, which lists them all. */
function ownFolder(file: string): string {
  const [first, ...rest] = relative(PLUGINS, file).split(sep);
  return rest.length ? join(PLUGINS, first!) : PLUGINS;
}

/** Why `specifier`, imported by `file`, is not allowed; undefined when it is. */
function refusal(file: string, specifier: string | null, isTest: boolean): string | undefined {
  if (specifier === null) return 'a dynamic import of a computed name';
  if (specifier === 'hook-intake/plugin') return undefined;
  if (specifier.startsWith('node:') || builtinModules.includes(specifier)) return undefined;
  if (specifier.startsWith('.')) {
    const target = resolve(dirname(file), specifier);
    if (target.startsWith(ownFolder(file) + sep)) return undefined;
    if (isTest && target.startsWith(HELPERS + sep)) return undefined;
    return `outside the plugin's folder (${relative(ROOT, target)})`;
  }
  const name = packageOf(specifier);
  if (name in pkg.dependencies) return undefined;
  if (isTest && name in pkg.devDependencies) return undefined;
  return name === 'hook-intake' ? 'the package by a name other than hook-intake/plugin' : 'not a declared dependency';
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every import under plugins/ that breaks the rule, as `file: 'specifier' (why)`. */
function offences(files: readonly string[]): string[] {
  return files.flatMap((file) => {
    const isTest = file.endsWith('.test.ts');
    return importsOf(readFileSync(file, 'utf8')).flatMap((specifier) => {
      const why = refusal(file, specifier, isTest);
      return why ? [`${relative(ROOT, file)}: '${specifier}' (${why})`] : [];
    });
  });
}

beforeAll(async () => {
  await init;
});

describe('the import reader', () => {
  it('finds every form of import, type-only and dynamic ones included', () => {
    const source = `import type { A } from 'a';
import { b, type C } from 'b';
import {
  d,
} from './d.ts';
export * from 'e';
export type { F } from 'f';
export type * from 'f2';
import 'g';
const re = /['"]/;
const html = 'text/*';
async function h(x: Map<string, number>): Promise<unknown> { return import('h'); }
const i = (name: string) => import(name);
const url = import.meta.url;
`;
    expect(importsOf(source)).toEqual(['a', 'b', './d.ts', 'e', 'f', 'f2', 'g', 'h', null]);
  });

  it('refuses what a third party could not import', () => {
    const file = join(PLUGINS, 'telegram', 'channel.ts');
    expect(refusal(file, 'hook-intake/plugin', false)).toBeUndefined();
    expect(refusal(file, './config.ts', false)).toBeUndefined();
    expect(refusal(file, 'node:crypto', false)).toBeUndefined();
    expect(refusal(file, '@slack/web-api', false)).toBeUndefined();
    expect(refusal(file, '../../src/log.ts', false)).toBe("outside the plugin's folder (src/log.ts)");
    expect(refusal(file, '../discord/channel.ts', false)).toBe("outside the plugin's folder (plugins/discord/channel.ts)");
    expect(refusal(file, 'hook-intake', false)).toBe('the package by a name other than hook-intake/plugin');
    expect(refusal(file, 'vitest', false)).toBe('not a declared dependency');
    expect(refusal(file, 'vitest', true)).toBeUndefined();
    expect(refusal(file, '../../test/helpers/runtime.ts', false)).toBe("outside the plugin's folder (test/helpers/runtime.ts)");
    expect(refusal(file, '../../test/helpers/runtime.ts', true)).toBeUndefined();
    expect(refusal(join(PLUGINS, 'index.ts'), './telegram/index.ts', false)).toBeUndefined();
  });
});

describe('the built-in plugins', () => {
  const files = tsFiles(PLUGINS);

  it('are all read', () => {
    expect(files.filter((f) => !f.endsWith('.test.ts')).length).toBeGreaterThan(30);
    expect(files.filter((f) => f.endsWith('.test.ts')).length).toBeGreaterThan(10);
  });

  it('import only hook-intake/plugin, node: modules, declared dependencies and their own folder', () => {
    expect(offences(files.filter((f) => !f.endsWith('.test.ts')))).toEqual([]);
  });

  it('are tested through the same, the dev dependencies and the test helpers', () => {
    expect(offences(files.filter((f) => f.endsWith('.test.ts')))).toEqual([]);
  });
});
