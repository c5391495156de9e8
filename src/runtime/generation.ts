/**
 * A generation: the immutable snapshot a request reads — validated config,
 * token matchers, plugin instances and compiled pipelines. A reload builds a
 * new one beside the current and swaps one reference; requests in flight keep
 * the generation they started with.
 */
import type { Logger } from 'pino';
import { Ajv } from 'ajv';
import type { LoadedConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { ConfigError, type ConfigIssue } from '../errors.ts';
import { createTokenMatcher, type TokenMatcher } from '../auth/token.ts';
import { PluginConfigError, type AgentProvider, type Channel, type PluginContext } from '../plugins/define.ts';
import type { Registry } from '../plugins/registry.ts';
import { translateAjvErrors } from '../config/validate.ts';
import { didYouMean } from '../util/did-you-mean.ts';
import type { Pipeline } from '../mapping/pipeline.ts';

export interface ChannelEntry {
  id: string;
  type: string;
  channel: Channel;
}

export interface Generation {
  readonly id: number;
  readonly loadedAt: number;
  readonly file: string | undefined;
  readonly config: Config;
  readonly hookToken: TokenMatcher | undefined;
  readonly gatewayToken: TokenMatcher | undefined;
  /** `agents.defaults.models` as a set, when configured. */
  readonly models: ReadonlySet<string> | undefined;
  readonly providers: ReadonlyMap<string, AgentProvider>;
  readonly channels: ReadonlyMap<string, ChannelEntry>;
  readonly pipelines: readonly Pipeline[];
  readonly warnings: readonly string[];
}

export interface BuildDeps {
  registry: Registry;
  logger: Logger;
  fetch?: typeof fetch;
  env?: Record<string, string | undefined>;
  clock?: () => number;
  /** Compiles mappings and presets into pipelines (the mapping engine); none when absent. */
  compilePipelines?: (loaded: LoadedConfig) => Pipeline[];
}

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
const validators = new WeakMap<object, ReturnType<typeof ajv.compile>>();

/** Validates a plugin's config slice against the schema it declares (defaults filled in place). */
function validateSlice(schema: object | undefined, slice: unknown, file: string, path: string): ConfigIssue[] {
  if (!schema) return [];
  let v = validators.get(schema);
  if (!v) {
    v = ajv.compile(schema);
    validators.set(schema, v);
  }
  if (v(slice)) return [];
  return translateAjvErrors(v.errors ?? [], file, schema as never).map((i) => ({
    ...i,
    path: i.path ? `${path}.${i.path}` : path,
  }));
}

let nextId = 1;

export function buildGeneration(loaded: LoadedConfig, deps: BuildDeps): Generation {
  const { config } = loaded;
  const file = loaded.file ?? '(embedded defaults)';
  const issues: ConfigIssue[] = [];
  const env = deps.env ?? process.env;
  const fetchImpl = deps.fetch ?? globalThis.fetch;
  const clock = deps.clock ?? Date.now;
  const ctx = (id: string, kind: string): PluginContext => ({
    id,
    logger: deps.logger.child({ [kind]: id }),
    fetch: fetchImpl,
    env,
    clock,
    configDir: loaded.dir,
  });
  /** A factory's own complaint, with the key it names appended to the entry's path. */
  const factoryIssue = (path: string, err: unknown): ConfigIssue =>
    err instanceof PluginConfigError
      ? { file, path: err.key ? `${path}.${err.key}` : path, message: err.message }
      : { file, path, message: (err as Error).message };

  const providers = new Map<string, AgentProvider>();
  for (const [id, slice] of Object.entries(config.agents.providers)) {
    const path = `agents.providers.${id}`;
    const factory = deps.registry.agent(slice.type);
    if (!factory) {
      const hint = didYouMean(slice.type, deps.registry.agentTypes());
      issues.push({ file, path: `${path}.type`, message: `unknown agent provider type "${slice.type}"${hint ? ` (did you mean "${hint}"?)` : ''}; known: ${deps.registry.agentTypes().join(', ')}` });
      continue;
    }
    const sliceIssues = validateSlice(factory.configSchema, slice, file, path);
    if (sliceIssues.length) {
      issues.push(...sliceIssues);
      continue;
    }
    try {
      providers.set(id, factory.create(slice, ctx(id, 'provider')));
    } catch (err) {
      issues.push(factoryIssue(path, err));
    }
  }

  const channels = new Map<string, ChannelEntry>();
  for (const [id, slice] of Object.entries(config.channels)) {
    const path = `channels.${id}`;
    const type = slice.type ?? id;
    const factory = deps.registry.channel(type);
    if (!factory) {
      const hint = didYouMean(type, deps.registry.channelTypes());
      issues.push({ file, path: slice.type ? `${path}.type` : path, message: `unknown channel type "${type}"${hint ? ` (did you mean "${hint}"?)` : ''}; known: ${deps.registry.channelTypes().join(', ')}` });
      continue;
    }
    const sliceIssues = validateSlice(factory.configSchema, slice, file, path);
    if (sliceIssues.length) {
      issues.push(...sliceIssues);
      continue;
    }
    try {
      channels.set(id, { id, type, channel: factory.create(slice, ctx(id, 'channel')) });
    } catch (err) {
      issues.push(factoryIssue(path, err));
    }
  }

  let pipelines: Pipeline[] = [];
  if (deps.compilePipelines) {
    try {
      pipelines = deps.compilePipelines(loaded);
    } catch (err) {
      if (err instanceof ConfigError) issues.push(...err.issues);
      else throw err;
    }
  }
  if (issues.length) {
    // the instances already made belong to a generation that will never run
    void closePlugins(providers.values(), channels.values(), deps.logger);
    throw new ConfigError(issues);
  }

  return Object.freeze({
    id: nextId++,
    loadedAt: Date.now(),
    file: loaded.file,
    config,
    hookToken: config.hooks.token ? createTokenMatcher(config.hooks.token) : undefined,
    gatewayToken: config.gateway.auth.token ? createTokenMatcher(config.gateway.auth.token) : undefined,
    models: config.agents.defaults.models ? new Set(config.agents.defaults.models) : undefined,
    providers,
    channels,
    pipelines: Object.freeze(pipelines),
    warnings: loaded.warnings,
  });
}

async function closePlugins(providers: Iterable<AgentProvider>, channels: Iterable<ChannelEntry>, logger: Logger): Promise<void> {
  const all: { close?(): Promise<void> | void }[] = [...providers, ...[...channels].map((c) => c.channel)];
  await Promise.all(
    all.map(async (p) => {
      try {
        await p.close?.();
      } catch (err) {
        logger.warn({ err }, 'closing a plugin instance failed');
      }
    }),
  );
}

/**
 * Releases what a generation's plugin instances hold (child processes,
 * sockets). Call it for a generation no request or run uses any more: at
 * shutdown, or after a swap once the old one has drained.
 */
export function closeGeneration(gen: Generation, logger: Logger): Promise<void> {
  return closePlugins(gen.providers.values(), gen.channels.values(), logger);
}

/** Holds the current generation; `swap` replaces it in one assignment. */
export class GenerationRef {
  private gen: Generation;
  lastReloadError: { at: number; issues: ConfigIssue[] } | undefined;
  constructor(initial: Generation) {
    this.gen = initial;
  }
  get current(): Generation {
    return this.gen;
  }
  swap(next: Generation): Generation {
    const prev = this.gen;
    this.gen = next;
    this.lastReloadError = undefined;
    return prev;
  }
}
