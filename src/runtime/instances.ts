/**
 * Creates the agent provider and channel instances a config names, each from
 * its plugin factory, after validating the config slice against the schema the
 * plugin declares (defaults filled in place).
 */
import type { Logger } from 'pino';
import type { ValidateFunction } from 'ajv';
import type { Config } from '../config/schema.ts';
import type { ConfigIssue } from '../errors.ts';
import { PluginConfigError, type AgentProvider, type PluginContext } from '../plugins/define.ts';
import type { Registry } from '../plugins/registry.ts';
import { translateAjvErrors } from '../config/validate.ts';
import { compile } from '../config/ajv.ts';
import { didYouMean } from '../util/did-you-mean.ts';
import type { ChannelEntry } from './generation.ts';

const validators = new WeakMap<object, ValidateFunction>();

function validateSlice(schema: object | undefined, slice: unknown, file: string, path: string): ConfigIssue[] {
  if (!schema) return [];
  let v = validators.get(schema);
  if (!v) {
    v = compile(schema);
    validators.set(schema, v);
  }
  if (v(slice)) return [];
  return translateAjvErrors(v.errors ?? [], file, schema as never).map((i) => ({ ...i, path: i.path ? `${path}.${i.path}` : path }));
}

export interface InstanceDeps {
  logger: Logger;
  fetch: typeof fetch;
  env: Record<string, string | undefined>;
  clock: () => number;
  /** Directory relative paths in plugin config resolve against (the config file's). */
  configDir: string;
}

/** A factory's own complaint, with the key it names appended to the entry's path. */
function factoryIssue(file: string, path: string, err: unknown): ConfigIssue {
  return err instanceof PluginConfigError
    ? { file, path: err.key ? `${path}.${err.key}` : path, message: err.message }
    : { file, path, message: (err as Error).message };
}

/** Closes provider and channel instances (child processes, sockets); failures are only logged. */
export async function closePlugins(providers: Iterable<AgentProvider>, channels: Iterable<ChannelEntry>, logger: Logger): Promise<void> {
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

interface Factory<T> {
  configSchema?: object;
  create(config: never, ctx: PluginContext): T;
}

export function instantiatePlugins(config: Config, registry: Registry, file: string, issues: ConfigIssue[], deps: InstanceDeps) {
  /** One config entry → one instance of the plugin its `type` names, or issues with the key path. */
  const make = <T>(kind: 'provider' | 'channel', what: string, path: string, id: string, type: string, typePath: string, slice: object, factory: Factory<T> | undefined, known: string[]): T | undefined => {
    if (!factory) {
      const hint = didYouMean(type, known);
      issues.push({ file, path: typePath, message: `unknown ${what} type "${type}"${hint ? ` (did you mean "${hint}"?)` : ''}; known: ${known.join(', ')}` });
      return undefined;
    }
    const sliceIssues = validateSlice(factory.configSchema, slice, file, path);
    if (sliceIssues.length) {
      issues.push(...sliceIssues);
      return undefined;
    }
    const ctx: PluginContext = { id, logger: deps.logger.child({ [kind]: id }), fetch: deps.fetch, env: deps.env, clock: deps.clock, configDir: deps.configDir };
    try {
      return factory.create(slice as never, ctx);
    } catch (err) {
      issues.push(factoryIssue(file, path, err));
      return undefined;
    }
  };

  const providers = new Map<string, AgentProvider>();
  for (const [id, slice] of Object.entries(config.agents.providers)) {
    const path = `agents.providers.${id}`;
    const p = make('provider', 'agent provider', path, id, slice.type, `${path}.type`, slice, registry.agent(slice.type), registry.agentTypes());
    if (p) providers.set(id, p);
  }

  const channels = new Map<string, ChannelEntry>();
  for (const [id, slice] of Object.entries(config.channels)) {
    const path = `channels.${id}`;
    const type = slice.type ?? id;
    const ch = make('channel', 'channel', path, id, type, slice.type ? `${path}.type` : path, slice, registry.channel(type), registry.channelTypes());
    if (ch) channels.set(id, { id, type, channel: ch });
  }
  return { providers, channels };
}
