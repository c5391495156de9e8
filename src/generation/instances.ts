/**
 * Creates the instances a config names (agent providers, channels, services,
 * and a verifier per mapping with `verify`), each from its plugin factory,
 * after validating the config slice against the schema the plugin declares
 * (defaults filled in place). An instance of the previous generation whose
 * plugin module and slice are unchanged is carried over instead: the same
 * object, not created, started or stopped again. Each instance counts the
 * generations holding it and is stopped when the last one lets it go.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { ValidateFunction } from 'ajv';
import type { Config } from '../config/schema.ts';
import type { ConfigIssue } from '../errors.ts';
import {
  PluginConfigError,
  type AgentProvider,
  type Channel,
  type DispatchAnswer,
  type Lifecycle,
  type PluginAction,
  type PluginContext,
  type Service,
  type Verifier,
} from '../plugins/define.ts';
import type { InstanceKind, Registry } from '../plugins/registry.ts';
import { SignatureConfigError } from '../auth/signatures.ts';
import { translateAjvErrors } from '../config/validate.ts';
import { compile } from '../config/ajv.ts';
import { didYouMean } from '../util/did-you-mean.ts';
import { printStdout } from '../log.ts';

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

/** Submits a plugin's actions into the dispatcher on behalf of instance `held`. */
export type Submit = (held: Held, actions: readonly PluginAction[]) => Promise<DispatchAnswer>;

export interface InstanceDeps {
  logger: Logger;
  fetch: typeof fetch;
  env: Record<string, string | undefined>;
  clock: () => number;
  /** Directory relative paths in plugin config resolve against (the config file's). */
  configDir: string;
}

/** One instance and what identifies it across reloads. */
export interface Held {
  readonly kind: InstanceKind;
  /** Identifies its config entry across reloads (`channel:telegram`, `verifier:hooks.mappings[0]`). */
  readonly key: string;
  readonly id: string;
  readonly type: string;
  readonly moduleKey: string | undefined;
  readonly slice: unknown;
  readonly instance: Lifecycle;
  readonly ctx: PluginContext;
  /** Generations (built or being built) holding it. */
  holders: number;
  started: boolean;
  stopped: boolean;
}

export interface ChannelEntry {
  id: string;
  type: string;
  channel: Channel;
}

/** A factory's own complaints, with the keys they name appended to the entry's path. */
function factoryIssues(file: string, path: string, err: unknown): ConfigIssue[] {
  if (err instanceof PluginConfigError) return [{ file, path: err.key ? `${path}.${err.key}` : path, message: err.message }];
  if (err instanceof SignatureConfigError) return err.issues.map((i) => ({ file, path: `${path}.${i.path}`, message: i.message }));
  return [{ file, path, message: (err as Error).message }];
}

interface Factory<T> {
  configSchema?: object;
  create(config: never, ctx: PluginContext): T;
}

interface Wanted<T> {
  kind: InstanceKind;
  /** For messages: `agent provider`, `channel`, … */
  what: string;
  /** Identity across reloads; defaults to `<kind>:<path>`. */
  key?: string;
  /** Key path for messages. */
  path: string;
  id: string;
  type: string;
  /** Where an unknown type is reported. */
  typePath: string;
  slice: object;
  factory: Factory<T> | undefined;
  known: string[];
}

export interface InstanceMaker {
  /** The instance `w` asks for (carried over or new), or undefined with its issues recorded in `sink` (the maker's list by default). */
  make<T extends Lifecycle>(w: Wanted<T>, sink?: ConfigIssue[]): T | undefined;
  /**
   * A verifier for a mapping's `verify` object, or the problems with it, their
   * paths relative to the mapping (`verify.secret[1]`). `key` identifies the
   * mapping across reloads.
   */
  verifier(key: string, mappingId: string, spec: { type: string }): { verifier?: Verifier; issues: { path: string; message: string }[] };
  /** Everything made or carried so far, in order. */
  readonly held: Held[];
}

export function createInstanceMaker(
  registry: Registry,
  file: string,
  issues: ConfigIssue[],
  deps: InstanceDeps,
  previous: readonly Held[] = [],
): InstanceMaker {
  const before = new Map(previous.map((h) => [h.key, h]));
  const held: Held[] = [];

  function make<T extends Lifecycle>(w: Wanted<T>, sink = issues): T | undefined {
    const key = w.key ?? `${w.kind}:${w.path}`;
    if (!w.factory) {
      const hint = didYouMean(w.type, w.known);
      sink.push({
        file,
        path: w.typePath,
        message: `unknown ${w.what} type "${w.type}"${hint ? ` (did you mean "${hint}"?)` : ''}; known: ${w.known.join(', ')}`,
      });
      return undefined;
    }
    const sliceIssues = validateSlice(w.factory.configSchema, w.slice, file, w.path);
    if (sliceIssues.length) {
      sink.push(...sliceIssues);
      return undefined;
    }
    const moduleKey = registry.moduleKey(w.kind, w.type);
    const old = before.get(key);
    if (
      old &&
      !old.stopped &&
      old.kind === w.kind &&
      old.type === w.type &&
      old.moduleKey === moduleKey &&
      isDeepStrictEqual(old.slice, w.slice)
    ) {
      old.holders++;
      held.push(old);
      return old.instance as T;
    }
    const ctx: PluginContext = {
      id: w.id,
      logger: deps.logger.child({ [w.kind]: w.id }),
      fetch: deps.fetch,
      env: deps.env,
      clock: deps.clock,
      configDir: deps.configDir,
      printStdout,
    };
    let instance: T;
    try {
      instance = w.factory.create(w.slice as never, ctx);
    } catch (err) {
      sink.push(...factoryIssues(file, w.path, err));
      return undefined;
    }
    held.push({
      kind: w.kind,
      key,
      id: w.id,
      type: w.type,
      moduleKey,
      slice: w.slice,
      instance,
      ctx,
      holders: 1,
      started: false,
      stopped: false,
    });
    return instance;
  }

  function verifier(key: string, mappingId: string, spec: { type: string }) {
    const { type, ...options } = spec;
    const found: ConfigIssue[] = [];
    const w = {
      kind: 'verifier',
      what: 'verifier',
      key: `verifier:${key}`,
      path: 'verify',
      id: mappingId,
      type,
      typePath: 'verify.type',
      slice: options,
    } as const;
    const v = make<Verifier>({ ...w, factory: registry.verifier(type), known: registry.verifierTypes() }, found);
    if (v && typeof v.verify !== 'function')
      found.push({ file, path: 'verify.type', message: `verifier "${type}" has no verify function` });
    return { ...(v && !found.length ? { verifier: v } : {}), issues: found.map((i) => ({ path: i.path, message: i.message })) };
  }

  return { make, verifier, held };
}

/** The providers, channels and services `config` names. */
export function instantiatePlugins(config: Config, registry: Registry, maker: InstanceMaker, issues: ConfigIssue[]) {
  const providers = new Map<string, AgentProvider>();
  for (const [id, slice] of Object.entries(config.agents.providers)) {
    const path = `agents.providers.${id}`;
    const p = maker.make<AgentProvider>(
      {
        kind: 'provider',
        what: 'agent provider',
        path,
        id,
        type: slice.type,
        typePath: `${path}.type`,
        slice,
        factory: registry.agent(slice.type),
        known: registry.agentTypes(),
      },
      issues,
    );
    if (p) providers.set(id, p);
  }

  const channels = new Map<string, ChannelEntry>();
  for (const [id, slice] of Object.entries(config.channels)) {
    const path = `channels.${id}`;
    const type = slice.type ?? id;
    const ch = maker.make<Channel>(
      {
        kind: 'channel',
        what: 'channel',
        path,
        id,
        type,
        typePath: slice.type ? `${path}.type` : path,
        slice,
        factory: registry.channel(type),
        known: registry.channelTypes(),
      },
      issues,
    );
    if (ch) channels.set(id, { id, type, channel: ch });
  }

  const services = new Map<string, Service>();
  for (const [id, slice] of Object.entries(config.services ?? {})) {
    const path = `services.${id}`;
    const type = slice.type ?? id;
    const s = maker.make<Service>(
      {
        kind: 'service',
        what: 'service',
        path,
        id,
        type,
        typePath: slice.type ? `${path}.type` : path,
        slice,
        factory: registry.service(type),
        known: registry.serviceTypes(),
      },
      issues,
    );
    if (s) services.set(id, s);
  }
  return { providers, channels, services };
}

/** Starts the instances not started yet; a failure is logged and the instance kept. */
export async function startInstances(held: readonly Held[], submit: Submit | undefined): Promise<void> {
  await Promise.all(
    held.map(async (h) => {
      if (h.started || h.stopped || !h.instance.start) return;
      h.started = true;
      const dispatch = (actions: readonly PluginAction[]) =>
        submit ? submit(h, actions) : Promise.reject(new Error('dispatch is not available here'));
      try {
        await h.instance.start({ ...h.ctx, config: h.slice, dispatch });
      } catch (err) {
        h.ctx.logger.error({ err: { message: (err as Error)?.message } }, `starting ${h.kind} "${h.id}" failed`);
      }
    }),
  );
}

/** Lets go of each instance; the ones no generation holds any more are stopped (once). Failures are only logged. */
export async function releaseInstances(held: readonly Held[]): Promise<void> {
  await Promise.all(
    held.map(async (h) => {
      if (--h.holders > 0 || h.stopped) return;
      h.stopped = true;
      try {
        await h.instance.stop?.();
      } catch (err) {
        h.ctx.logger.warn({ err: { message: (err as Error)?.message } }, `stopping ${h.kind} "${h.id}" failed`);
      }
    }),
  );
}
