/**
 * Plugin instances across generations: started when their generation goes
 * live, carried into the next one when their plugin and config slice are
 * unchanged, stopped once when the last generation holding them is released.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, tempDir } from '../helpers/cli.ts';
import { buildGeneration } from '../../src/generation/build.ts';
import { GenerationRef } from '../../src/generation/ref.ts';
import type { Generation } from '../../src/generation/types.ts';
import { createReloader } from '../../src/generation/reload.ts';
import { definePlugin, PluginConfigError, Type, type StartContext } from '../../src/plugins/define.ts';
import { ConfigError } from '../../src/errors.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { createLogger } from '../../src/log.ts';
import { testConfig } from '../helpers/runtime.ts';

/** A channel and a service that count what happens to their instances. */
function countingPlugin() {
  const log: string[] = [];
  let made = 0;
  const starts: StartContext[] = [];
  const lifecycle = (name: string) => ({
    start(ctx: StartContext) {
      starts.push(ctx);
      log.push(`start ${name}`);
    },
    stop() {
      log.push(`stop ${name}`);
    },
  });
  const plugin = definePlugin({
    name: 'counting',
    channels: {
      counted: {
        configSchema: Type.Object({ type: Type.Optional(Type.String()), room: Type.String(), retries: Type.Integer({ default: 3 }) }),
        create: (config: { room: string }) => {
          const name = `${config.room}#${++made}`;
          return { ...lifecycle(name), async send() {} };
        },
      },
    },
    services: {
      ticker: {
        create: (config: { every?: number }) => {
          if (config.every === 0) throw new PluginConfigError('every', 'must not be 0');
          return lifecycle(`ticker#${++made}`);
        },
      },
    },
  });
  return { plugin, log, starts, made: () => made };
}

const silent = createLogger('silent');

function configWith(channels: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return testConfig({ channels: { console: {}, ...channels }, ...extra });
}

async function build(
  p: ReturnType<typeof countingPlugin>,
  channels: Record<string, unknown>,
  previous?: Generation,
  extra?: Record<string, unknown>,
) {
  return buildGeneration(configWith(channels, extra), {
    builtins: [...builtinPlugins, p.plugin],
    logger: silent,
    previous,
    clock: () => 1_000,
  });
}

describe('plugin instances across reloads', () => {
  it('keeps an instance whose config is unchanged: not made, started or stopped again', async () => {
    const p = countingPlugin();
    const first = await build(p, { team: { type: 'counted', room: 'a' } });
    const ref = new GenerationRef(first);
    await first.start();
    const reloader = createReloader({
      generations: ref,
      build: () => build(p, { team: { type: 'counted', room: 'a' } }, ref.current),
      logger: silent,
    });
    expect(await reloader.reload('test')).toBe(true);
    expect(ref.current).not.toBe(first);
    expect(ref.current.channels.get('team')!.channel).toBe(first.channels.get('team')!.channel);
    expect(p.made()).toBe(1);
    expect(p.log).toEqual(['start a#1']);
  });

  it('makes a new instance when the slice changes, and stops the old one once when its generation is released', async () => {
    const p = countingPlugin();
    const first = await build(p, { team: { type: 'counted', room: 'a' } });
    const ref = new GenerationRef(first);
    await first.start();
    const inFlight = ref.acquire(); // a request still running on the first generation
    const reloader = createReloader({
      generations: ref,
      build: () => build(p, { team: { type: 'counted', room: 'b' } }, ref.current),
      logger: silent,
    });
    expect(await reloader.reload('test')).toBe(true);
    expect(ref.current.channels.get('team')!.channel).not.toBe(first.channels.get('team')!.channel);
    expect(p.log).toEqual(['start a#1', 'start b#2']);
    ref.release(inFlight);
    await first.dispose(); // the release disposed it already; a second call changes nothing
    expect(p.log).toEqual(['start a#1', 'start b#2', 'stop a#1']);
    await ref.disposeAll();
    expect(p.log.filter((l) => l.startsWith('stop'))).toEqual(['stop a#1', 'stop b#2']);
  });

  it('compares the slice with defaults filled, so writing a default out keeps the instance', async () => {
    const p = countingPlugin();
    const first = await build(p, { team: { type: 'counted', room: 'a' } });
    const next = await build(p, { team: { type: 'counted', room: 'a', retries: 3 } }, first);
    expect(next.channels.get('team')!.channel).toBe(first.channels.get('team')!.channel);
  });

  it('a failed build hands carried instances back without stopping them', async () => {
    const p = countingPlugin();
    const first = await build(p, { team: { type: 'counted', room: 'a' } });
    await first.start();
    await expect(build(p, { team: { type: 'counted', room: 'a' } }, first, { services: { ticker: { every: 0 } } })).rejects.toThrow(
      ConfigError,
    );
    await Promise.resolve();
    expect(p.log).toEqual(['start a#1']);
    await first.dispose();
    expect(p.log).toEqual(['start a#1', 'stop a#1']);
  });

  it('starts services with their config slice, id, clock and a dispatch function', async () => {
    const p = countingPlugin();
    const gen = await build(p, {}, undefined, { services: { ticker: { every: 5 } } });
    expect(p.log).toEqual([]);
    await gen.start();
    await gen.start();
    expect(p.log).toEqual(['start ticker#1']);
    const ctx = p.starts[0]!;
    expect(ctx.id).toBe('ticker');
    expect(ctx.config).toEqual({ every: 5 });
    expect(ctx.clock()).toBe(1_000);
    // no dispatcher behind a generation built on its own (`check`, tests)
    await expect(ctx.dispatch([{ kind: 'wake', text: 'x' }])).rejects.toThrow(/not available/);
  });

  it('reports a service problem with its key path, and an unknown service type with a suggestion', async () => {
    const p = countingPlugin();
    const err = await build(p, {}, undefined, { services: { ticker: { every: 0 }, tickr: {} } }).catch((e: ConfigError) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const lines = (err as ConfigError).issues.map((i) => `${i.path}: ${i.message}`);
    expect(lines).toContain('services.ticker.every: must not be 0');
    expect(lines.find((l) => l.startsWith('services.tickr:'))).toMatch(/unknown service type "tickr" \(did you mean "ticker"\?\)/);
  });
});

describe('plugin instances from a plugin file', () => {
  const dir = tempDir('hook-intake-instances-');
  afterAll(() => cleanup(dir));
  const file = join(dir, 'memo.ts');
  const write = (tag: string) =>
    writeFileSync(
      file,
      `import { definePlugin } from 'hook-intake/plugin';
export default definePlugin({ name: 'memo', channels: { memo: { create: () => ({ tag: '${tag}', async send() {} }) } } });
`,
    );
  const buildFrom = (previous?: Generation) =>
    buildGeneration(testConfig({ plugins: [file], channels: { console: {}, memo: {} } }, dir), {
      builtins: builtinPlugins,
      logger: silent,
      previous,
    });

  it('keeps the instance while the file is unchanged, and makes a new one from an edited file', async () => {
    write('one');
    const first = await buildFrom();
    const same = await buildFrom(first);
    expect(same.channels.get('memo')!.channel).toBe(first.channels.get('memo')!.channel);
    write('two');
    const edited = await buildFrom(same);
    expect(edited.channels.get('memo')!.channel).not.toBe(first.channels.get('memo')!.channel);
    expect((edited.channels.get('memo')!.channel as unknown as { tag: string }).tag).toBe('two');
  });
});
