/**
 * The plugin API. A plugin is data plus setup: a name and up to three kinds of
 * contribution, each keyed by the `type` users put in their config:
 *
 * - `agents`: agent providers (`agents.providers.<id>.type`)
 * - `channels`: delivery channels (`channels.<id>.type`, defaulting to the id)
 * - `presets`: named mapping lists (`hooks.presets`)
 *
 * Factories receive their config slice (validated against `configSchema`
 * when given), a child logger, an injected `fetch` and a clock. A factory that
 * finds a problem the schema cannot express throws `PluginConfigError` naming
 * the key, so the operator sees `agents.providers.<id>.<key>: reason`.
 */
import type { TSchema } from '@sinclair/typebox';

/** TypeBox's schema builder, for a plugin's `configSchema` (`import { definePlugin, Type } from 'hook-intake/plugin'`). */
export { Type, type Static } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { MappingConfig } from '../config/schema.ts';

/** A mapping as written in `hooks.mappings`, for a plugin's `presets`. */
export type { MappingConfig };

export interface PluginContext {
  /** The entry's id in the config (`agents.providers.<id>` / `channels.<id>`). */
  id: string;
  logger: Logger;
  fetch: typeof fetch;
  env: Record<string, string | undefined>;
  /** Directory of the config file (the working directory without one): relative paths in plugin config resolve against it. */
  configDir: string;
  /** Milliseconds since the epoch (Retry-After dates, timestamps); injected so tests can control time. */
  clock: () => number;
}

/** A config problem found by a plugin factory; `key` is the path inside the plugin's slice. */
export class PluginConfigError extends Error {
  readonly key: string;
  constructor(key: string, message: string) {
    super(message);
    this.name = 'PluginConfigError';
    this.key = key;
  }
}

/**
 * A user plugin gets a copy of this module of its own (its loader evaluates the plugin and what
 * it imports afresh at each load, so that an edit is seen), and with it a copy of each error
 * class here. The service tells these errors apart with `instanceof` against its own copy, so
 * each class knows the instances of every copy by a mark that all copies share.
 */
const KIND = Symbol.for('hook-intake.error-kind');

/** Makes `value instanceof cls` true for an instance of any copy of `cls`; subclasses check as usual. */
function recognisedAcrossCopies(cls: abstract new (...args: never[]) => Error, kind: string): void {
  Object.defineProperty(cls.prototype, KIND, { value: kind });
  Object.defineProperty(cls, Symbol.hasInstance, {
    value(this: unknown, value: unknown): boolean {
      if (this !== cls) return Function.prototype[Symbol.hasInstance].call(this, value);
      return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[KIND] === kind;
    },
  });
}
recognisedAcrossCopies(PluginConfigError, 'PluginConfigError');

export interface AgentMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface AgentRequest {
  runId: string;
  sessionKey: string;
  /** The model name after the `provider/` prefix. */
  model: string;
  thinking: string | null;
  /** The session transcript followed by the new user message. */
  messages: AgentMessage[];
  /** Aborted when the run's `timeoutSeconds` pass or the service shuts down. */
  signal: AbortSignal;
  timeoutMs: number;
}

export interface AgentReply {
  text: string;
}

export interface AgentProvider {
  run(req: AgentRequest): Promise<AgentReply>;
  close?(): Promise<void> | void;
}

export interface AgentProviderFactory<C = Record<string, unknown>> {
  configSchema?: TSchema;
  create(config: C, ctx: PluginContext): AgentProvider;
}

export interface ChannelMessage {
  runId: string;
  /** Recipient on the channel (chat id, phone number, channel id); null when the channel needs none. */
  to: string | null;
  text: string;
  /**
   * The outbox entry this message belongs to. With `part`, a stable key for
   * receivers that deduplicate: a retried delivery sends the same pair again.
   */
  deliveryId: string;
  /** 1-based index of this chunk, and how many chunks the reply was split into (1 when it fits). */
  part: number;
  parts: number;
  /** Aborted when the service shuts down; the chunk is then sent again on the next start. */
  signal: AbortSignal;
}

export interface ChannelLimits {
  /**
   * Longest text one message may carry, in UTF-16 code units (JavaScript
   * string length); longer replies are split into chunks sent in order.
   */
  maxTextLength?: number;
  /** Whether a recipient (`to`) is required; without one the delivery is skipped with a reason. */
  requiresTo?: boolean;
}

export interface Channel {
  readonly limits?: ChannelLimits;
  /**
   * Sends one message (one chunk of a reply). Resolve when the service has
   * accepted it; throw `ChannelError` to say whether and when to retry (a
   * rate-limit answer's Retry-After goes in `retryAfterMs`). Any other error
   * is treated as retryable.
   */
  send(msg: ChannelMessage): Promise<void>;
  close?(): Promise<void> | void;
}

/** Thrown by a channel's `send` to say whether, and when, to retry. */
export class ChannelError extends Error {
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, opts: { retryable: boolean; retryAfterMs?: number; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ChannelError';
    this.retryable = opts.retryable;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

recognisedAcrossCopies(ChannelError, 'ChannelError');

export interface ChannelFactory<C = Record<string, unknown>> {
  configSchema?: TSchema;
  create(config: C, ctx: PluginContext): Channel;
}

export interface PresetDefinition {
  /** Mappings in order; transform modules resolve inside `transformsDir`. */
  mappings: MappingConfig[];
  /** Directory of the preset's own transforms (absolute). */
  transformsDir?: string;
  /** File the preset was read from (error messages, hot reload). */
  file?: string;
}

export interface Plugin {
  name: string;
  agents?: Record<string, AgentProviderFactory<any>>;
  channels?: Record<string, ChannelFactory<any>>;
  presets?: Record<string, PresetDefinition>;
}

/** Identity with types: `export default definePlugin({...})`. */
export function definePlugin<P extends Plugin>(plugin: P): P {
  return plugin;
}
