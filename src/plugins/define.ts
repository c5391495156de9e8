/**
 * The plugin API. A plugin is data plus setup: a name and up to five kinds of
 * contribution, each keyed by the `type` users put in their config:
 *
 * - `agents`: agent providers (`agents.providers.<id>.type`)
 * - `channels`: delivery channels (`channels.<id>.type`, defaulting to the id)
 * - `verifiers`: inbound request verifiers (`hooks.mappings[].verify.type`)
 * - `services`: long-running work of its own (`services.<id>.type`, defaulting to the id)
 * - `presets`: named mapping lists (`hooks.presets`)
 *
 * Factories receive their config slice (validated against `configSchema`
 * when given), a child logger, an injected `fetch` and a clock. A factory that
 * finds a problem the schema cannot express throws `PluginConfigError` naming
 * the key, so the operator sees `agents.providers.<id>.<key>: reason`.
 *
 * Every instance may have `start(ctx)` and `stop()` (`Lifecycle`): started when
 * the configuration that made it goes live, stopped once when the last
 * configuration using it is released (or at shutdown). An instance whose
 * plugin module and config slice are unchanged by a reload is kept as it is.
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
  /**
   * Writes `text` to the service's standard output through the writer its log lines share, so it
   * never lands inside a log line (the `console` channel). Queued, not awaited.
   */
  printStdout(text: string): void;
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
  /** The session transcript followed by the new user message (only the new message in an isolated session). */
  messages: AgentMessage[];
  /**
   * What the run's agent is told before the conversation (its `instructions`, docs/agents.md): a
   * provider passes it as its API's system prompt. Null when the agent has none.
   */
  instructions: string | null;
  /** Aborted when the run's `timeoutSeconds` pass or the service shuts down. */
  signal: AbortSignal;
  timeoutMs: number;
  /**
   * The hook run's action as accepted, for a provider that hands it on to another system (`gateway`);
   * absent for a heartbeat.
   */
  hook?: { name: string; wakeMode: 'now' | 'next-heartbeat'; deliver: boolean };
}

export interface AgentReply {
  /** The reply; '' with `forwarded`. */
  text: string;
  /**
   * Set by a provider that handed the action to another system which carries it out and delivers
   * its reply itself (`gateway`): the run ends `ok` with no reply of its own, so nothing is
   * delivered. `runId` is the other system's id for the work, null when its answer names none.
   */
  forwarded?: { runId: string | null };
  /**
   * The tokens the call cost, when the provider's API reports them (docs/runtime.md, "Token usage"):
   * stored with the run, shown by the API and the console, counted on `/metrics`. Leave it out when
   * the API reports none. Each count is a non-negative integer; a reply with anything else is
   * stored without usage.
   */
  usage?: AgentUsage;
}

/** Tokens of one agent call: what the model read (the prompt, the transcript, the instructions) and what it wrote. */
export interface AgentUsage {
  inputTokens: number;
  outputTokens: number;
}

/** What `start` receives: the creation context plus the config slice and a way into the dispatcher. */
export interface StartContext extends PluginContext {
  /** The instance's config slice as validated (defaults filled in). */
  config: unknown;
  /**
   * Submits actions exactly as a hook request would: each is validated like a
   * `/hooks/wake` or `/hooks/agent` body (`kind` says which), wrapped in the
   * safety boundary labelled with this instance's id, and stored before the
   * promise resolves. Rejects with the validation error naming the field, or
   * when the queue is full or the store unavailable.
   */
  dispatch(actions: readonly PluginAction[]): Promise<DispatchAnswer>;
}

/** An action a plugin submits: a wake or an agent body as `/hooks/wake` or `/hooks/agent` takes it. */
export type PluginAction = ({ kind: 'wake' } & Record<string, unknown>) | ({ kind: 'agent' } & Record<string, unknown>);

/** The dispatcher's answer: the same status and body a hook request would get. */
export interface DispatchAnswer {
  status: number;
  body: Record<string, unknown>;
  runIds: string[];
  eventIds: string[];
}

/**
 * Optional lifecycle of any instance. `start` runs once, when the configuration
 * that made the instance goes live (a failure is logged; the instance stays).
 * `stop` runs once, when no live or in-flight configuration uses the instance
 * any more, at shutdown within the stop deadline, or when the configuration
 * that made it failed to build: then `start` never ran, so `stop` must cope.
 */
export interface Lifecycle {
  start?(ctx: StartContext): Promise<void> | void;
  stop?(): Promise<void> | void;
}

export interface AgentProvider extends Lifecycle {
  run(req: AgentRequest): Promise<AgentReply>;
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
  /** 1 on the delivery's first attempt; higher on retries (a channel may reuse an idempotency key). */
  attempt: number;
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

export interface Channel extends Lifecycle {
  readonly limits?: ChannelLimits;
  /**
   * Checks a recipient when a request names it, so a wrong `to` is a 400 at
   * intake (field `to`) rather than a failed delivery later. Returns why it is
   * wrong (a phrase naming the expected form, e.g. "a chat id (123, -100…) or
   * @channel"), or undefined when it is fine. Without it any `to` is accepted.
   */
  checkTo?(to: string): string | undefined;
  /**
   * Turns the agent's Markdown reply into the messages to send: rendered for
   * the service (escaping what it would interpret) and split so each fits its
   * limit. Called once per delivery, at its first attempt; the parts are
   * stored with the delivery, so retries and restarts send the same text.
   * Without it the reply is split by `limits.maxTextLength` as plain text.
   */
  render?(markdown: string): string[];
  /**
   * Sends one message (one chunk of a reply). Resolve when the service has
   * accepted it; throw `ChannelError` to say whether and when to retry (a
   * rate-limit answer's Retry-After goes in `retryAfterMs`). Any other error
   * is treated as retryable.
   */
  send(msg: ChannelMessage): Promise<void>;
}

/**
 * Thrown by a channel's `send` to say whether, and when, to retry.
 *
 * - rate limited: `{retryable: true, retryAfterMs}` with the service's own hint;
 * - transient (5xx, network error before the request was sent): `{retryable: true}`;
 * - permanent (wrong target or credential): `{retryable: false}`, the message
 *   carrying the service's code and text (it becomes the delivery's reason);
 * - ambiguous (the request may have reached the service, e.g. a timeout after
 *   sending): `{retryable: true, ambiguous: true}`. Such a part is retried at
 *   most once, since a retry may post it twice.
 *
 * The message must never hold a token, a URL with a token, or the reply's text.
 */
export class ChannelError extends Error {
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly ambiguous: boolean;
  constructor(message: string, opts: { retryable: boolean; retryAfterMs?: number; ambiguous?: boolean; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ChannelError';
    this.retryable = opts.retryable;
    this.retryAfterMs = opts.retryAfterMs;
    this.ambiguous = opts.ambiguous ?? false;
  }
}

export interface ChannelFactory<C = Record<string, unknown>> {
  configSchema?: TSchema;
  create(config: C, ctx: PluginContext): Channel;
}

/** Request headers as Node hands them over (lower-case names). */
export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined>>;

/** What a verifier sees of an inbound request: the exact body bytes, headers, URL and query. */
export interface VerifyRequest {
  /** The hook name after the prefix (`github` for `/hooks/github`). */
  readonly name: string;
  readonly headers: HeaderBag;
  /**
   * The request's path and query as sent (`/hooks/twilio?x=1`), without a `token` parameter: what a
   * scheme that signs the URL (Twilio's, HubSpot's) rebuilds the signed URL from, with `Host`.
   */
  readonly url: string;
  /** The query parameters, the first value of each, never `token`. */
  readonly query: Readonly<Record<string, string>>;
  readonly rawBody: Uint8Array;
  /** The body as parsed: the JSON value, or an object of the fields of a form post. Verify signatures over `rawBody`, never over this. */
  readonly payload: unknown;
  /** Milliseconds since the epoch when the request arrived (the injected clock). */
  readonly receivedAt: number;
}

/**
 * An answer sent as is, instead of running the mapping: nothing is stored.
 * `body` is sent as JSON; `text` (for a provider that wants its challenge
 * echoed bare) as `text/plain`.
 */
export type DirectAnswer = { status: number; body: Record<string, unknown> } | { status: number; text: string };

/** What a verifier sees of a `GET` to a named hook: a provider's subscription handshake, which has no body. */
export interface HandshakeRequest {
  readonly name: string;
  readonly headers: HeaderBag;
  /** The query parameters, the first value of each (`hub.challenge`, …). */
  readonly query: Readonly<Record<string, string>>;
  readonly receivedAt: number;
}

/** A handshake's verdict: the answer to send, or why it is refused (`403 FORBIDDEN`; `reason` is logged, a fixed phrase). */
export type HandshakeOutcome = { readonly ok: true; readonly answer: DirectAnswer } | { readonly ok: false; readonly reason: string };

/**
 * A verifier's verdict. `ok: true` lets the mapping run; with `answer` the
 * request is a handshake (a ping, a URL check) answered directly. `reason` is
 * logged: a fixed phrase, never a secret, a signature or header content.
 */
export type VerifyOutcome =
  | {
      readonly ok: true /** Which configured secret matched (0-based), when there are several. */;
      readonly secretIndex?: number;
      readonly answer?: DirectAnswer;
    }
  | { readonly ok: false; readonly reason: string };

/**
 * Checks a request's origin for a mapping with `verify`. Built once per
 * mapping when the configuration is compiled (decode keys then); `verify` runs
 * per request, must not throw and must not do I/O.
 */
export interface Verifier extends Lifecycle {
  verify(req: VerifyRequest): VerifyOutcome;
  /**
   * Answers a provider's `GET` handshake to the hook, for providers that
   * confirm a webhook URL that way (Meta's `hub.challenge`). Hooks take only
   * `POST` otherwise: a `GET` to a named hook goes to the first mapping on
   * that path whose verifier has this method (its other match rules are not
   * applied: a handshake has no payload), and is `405` when there is none.
   * Nothing is stored and no mapping runs. Same rules as `verify`: no throw,
   * no I/O, a fixed phrase as `reason`.
   */
  handshake?(req: HandshakeRequest): HandshakeOutcome;
  /**
   * The body as the request log keeps it, for a scheme whose credential travels in the body (a
   * Mattermost token): the credential cut out of the raw bytes, everything else as received.
   * Called only for a request this verifier accepted, with its parsed payload. No throw, no I/O.
   */
  keptBody?(body: Uint8Array, payload: unknown): Uint8Array;
}

/** `options` is the mapping's `verify` object without `type`. */
export interface VerifierFactory<C = Record<string, unknown>> {
  configSchema?: TSchema;
  create(options: C, ctx: PluginContext): Verifier;
}

/** Long-running work of a plugin's own (a mail watcher, a chat connection); it does its work from `start`. */
export interface Service extends Lifecycle {}

export interface ServiceFactory<C = Record<string, unknown>> {
  configSchema?: TSchema;
  create(config: C, ctx: PluginContext): Service;
}

/**
 * A preset (docs/presets.md): either a list of mappings taken as they are (`mappings`), or a source —
 * one provider's webhooks — from which `hooks.presets` options (`secret`, `path`, `events`, …) build
 * one mapping: its signature scheme, how it names the event type and the delivery id, and the
 * transform that writes the agent's message.
 */
export interface PresetDefinition {
  description?: string;
  /** Mappings in order; transform modules resolve inside `transformsDir`. */
  mappings?: MappingConfig[];
  /** A source preset's action name (`GitHub`), also the source shown in the safety boundary unless `label`. */
  name?: string;
  label?: string;
  /** The `verify.type` of the provider's signature scheme; absent: the hook token is the credential. */
  verify?: string;
  /** Options of the scheme the preset takes beside `secret` (`publicKey`, `publicUrl`), passed into `verify`. */
  verifyOptions?: string[];
  /** A template naming the event type (`{{headers.x-github-event}}`, `{{type}}`). */
  event?: string;
  /** The event types the preset writes a message for; others get a generic summary. */
  events?: string[];
  /** A template naming the provider's delivery id, the idempotency key (`{{headers.x-github-delivery}}`). */
  idempotencyKey?: string;
  /** The transform (a module in `transformsDir`) that writes the message and the session key. */
  transform?: string;
  /** The action by default (`agent`). */
  action?: 'agent' | 'wake';
  /** What `hook-intake presets show` runs to print a sample message: a payload file in the preset's folder and its headers. */
  sample?: { payload: string; headers?: Record<string, string> };
  /** The steps on the provider's side, printed by `hook-intake sources add`; `{url}` stands for the hook's URL. */
  setup?: string[];
  /** Directory of the preset's own transforms (absolute). */
  transformsDir?: string;
  /** File the preset was read from (error messages, hot reload). */
  file?: string;
}

export interface Plugin {
  name: string;
  // biome-ignore lint/suspicious/noExplicitAny: each factory has its own config type
  agents?: Record<string, AgentProviderFactory<any>>;
  // biome-ignore lint/suspicious/noExplicitAny: each factory has its own config type
  channels?: Record<string, ChannelFactory<any>>;
  // biome-ignore lint/suspicious/noExplicitAny: each factory has its own config type
  verifiers?: Record<string, VerifierFactory<any>>;
  // biome-ignore lint/suspicious/noExplicitAny: each factory has its own config type
  services?: Record<string, ServiceFactory<any>>;
  presets?: Record<string, PresetDefinition>;
}

/** Identity with types: `export default definePlugin({...})`. */
export function definePlugin<P extends Plugin>(plugin: P): P {
  return plugin;
}
