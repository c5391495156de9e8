/**
 * The package as others use it: every file `package.json` names exists, and the public API
 * (plugin definition, transform types) imports by package name — `hook-intake`,
 * `hook-intake/plugin`, `hook-intake/transform` — in Node's own resolver (a package may import
 * itself by name through its `exports`), here, and in a plugin that lives outside the package.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ChannelError, definePlugin, PluginConfigError, Type, type Plugin, type Transform } from 'hook-intake';
import * as pluginApi from 'hook-intake/plugin';
import type { TransformContext, TransformResult } from 'hook-intake/transform';
import { ChannelError as InternalChannelError, PluginConfigError as InternalPluginConfigError } from '../src/plugins/define.ts';
import { loadPluginModule } from '../src/plugins/load.ts';
import { cleanup, ROOT, tempDir } from './helpers/cli.ts';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: unknown; bin: Record<string, string> | string };

/** Every path a field of package.json names, with where it is named. */
function targets(value: unknown, at: string): [string, string][] {
  if (typeof value === 'string') return [[at, value]];
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => targets(v, `${at}[${JSON.stringify(k)}]`));
  return [];
}

describe('package.json', () => {
  it('names only files that exist, in exports and bin', () => {
    const named = [...targets(pkg.exports, 'exports'), ...targets(pkg.bin, 'bin')];
    // each name of the API resolves to the compiled dist/ by default, to the sources under test with the
    // condition tsconfig.json and vitest.config.ts set (docs/development.md, "Building")
    const names = ['exports["."]', 'exports["./plugin"]', 'exports["./transform"]'];
    expect(named.map(([at]) => at)).toEqual(
      expect.arrayContaining([...names.flatMap((n) => [`${n}["default"]`, `${n}["hook-intake-source"]`]), 'bin["hook-intake"]']),
    );
    const missing = named.filter(([, path]) => !existsSync(join(ROOT, path)));
    expect(missing).toEqual([]);
  });
});

describe('the public API by package name', () => {
  const dir = tempDir('hook-intake-package-');
  afterAll(() => cleanup(dir));

  it('defines a plugin and a transform with what `hook-intake` exports', async () => {
    const Config = Type.Object({ url: Type.String() });
    const plugin: Plugin = definePlugin({
      name: 'by-name',
      channels: {
        post: {
          configSchema: Config,
          create: () => ({
            send: async () => {
              throw new ChannelError('refused', { retryable: false });
            },
          }),
        },
      },
    });
    expect(plugin.name).toBe('by-name');
    expect(Config.properties.url.type).toBe('string');
    const channel = plugin.channels!.post!.create({}, {} as never);
    await expect(channel.send({} as never)).rejects.toMatchObject({ name: 'ChannelError', retryable: false });
    expect(new PluginConfigError('url', 'must be https').key).toBe('url');
    // the plugin part names the same things
    expect(pluginApi.definePlugin).toBe(definePlugin);
    expect(pluginApi.ChannelError).toBe(ChannelError);

    const shape: Transform<{ n: number }> = (ctx) => ({ kind: 'wake', text: `n is ${ctx.payload.n}` });
    const skip = (ctx: TransformContext<{ n: number }>): TransformResult => (ctx.payload.n ? undefined : null);
    const ctx = { payload: { n: 2 }, headers: {}, query: {}, path: 'p', url: '/hooks/p', now: '', action: { kind: 'wake' } } as const;
    expect(shape(ctx)).toEqual({ kind: 'wake', text: 'n is 2' });
    expect(skip({ ...ctx, payload: { n: 0 } })).toBeNull();
  });

  it('resolves all three names in Node itself, from inside the package', async () => {
    const script = `
      const root = await import('hook-intake');
      const plugin = await import('hook-intake/plugin');
      const transform = await import('hook-intake/transform');
      const p = root.definePlugin({ name: 'n', channels: {} });
      const e = new plugin.ChannelError('x', { retryable: true });
      console.log(JSON.stringify({ name: p.name, same: root.ChannelError === plugin.ChannelError, retryable: e.retryable, schema: plugin.Type.String().type, transform: Object.keys(transform) }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT });
    expect(JSON.parse(stdout)).toEqual({ name: 'n', same: true, retryable: true, schema: 'string', transform: [] });
  });

  it('lets a plugin outside the package import the API under each name, and the service recognises its errors', async () => {
    const file = join(dir, 'outside.ts');
    writeFileSync(
      file,
      `import { definePlugin, ChannelError } from 'hook-intake';
import { PluginConfigError, Type } from 'hook-intake/plugin';
import type { TransformResult } from 'hook-intake/transform';
const none: TransformResult = null;
export default definePlugin({
  name: 'outside',
  sendError: new ChannelError('HTTP 400', { retryable: false }),
  configError: new PluginConfigError('url', 'must be https'),
  schema: Type.Number(),
  none,
});
`,
    );
    const plugin = (await loadPluginModule(file)) as Plugin & { sendError: unknown; configError: unknown; schema: { type: string } };
    expect(plugin.name).toBe('outside');
    expect(plugin.schema.type).toBe('number');
    // the loader hands the plugin the service's own API module, so the outbox (not retrying a
    // ChannelError that says so) and the config check (naming a PluginConfigError's key) tell
    // these errors by their class
    expect(Object.getPrototypeOf(plugin.sendError)).toBe(InternalChannelError.prototype);
    expect(plugin.sendError).toBeInstanceOf(InternalChannelError);
    expect(plugin.configError).toBeInstanceOf(InternalPluginConfigError);
    expect(plugin.sendError).not.toBeInstanceOf(InternalPluginConfigError);
    expect(new Error('HTTP 400')).not.toBeInstanceOf(InternalChannelError);
    class Refused extends InternalChannelError {}
    expect(new Refused('HTTP 403', { retryable: false })).toBeInstanceOf(InternalChannelError);
    expect(plugin.sendError).not.toBeInstanceOf(Refused);
  });

  it('gives a plugin loaded in Node the classes the service runs on, a subclass of them included', async () => {
    const file = join(dir, 'subclass.ts');
    writeFileSync(
      file,
      `import { ChannelError, definePlugin } from 'hook-intake/plugin';
import * as root from 'hook-intake';
class Refused extends ChannelError {}
export default definePlugin({ name: 'subclass', refused: new Refused('HTTP 403', { retryable: false }), same: root.ChannelError === ChannelError });
`,
    );
    // the service as the CLI runs it: the compiled dist/, which the package's name resolves to in Node
    const script = `
      const { ChannelError } = await import('hook-intake/plugin');
      const { loadPluginModule } = await import('./dist/src/plugins/load.js');
      const p = await loadPluginModule(${JSON.stringify(file)});
      console.log(JSON.stringify({ same: p.same, recognised: p.refused instanceof ChannelError, retryable: p.refused.retryable }));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT });
    expect(JSON.parse(stdout)).toEqual({ same: true, recognised: true, retryable: false });
  });
});
