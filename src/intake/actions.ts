/**
 * The two actions and their validation. A direct `/hooks/wake` or
 * `/hooks/agent` body and an action produced by a mapping pipeline go through
 * the same functions, so they are checked exactly alike (docs/http.md, "POST {hooks.path}/<name>").
 */
import type { ErrorObject } from 'ajv';
import { Type, type Static } from '@sinclair/typebox';
import { errors } from '../errors.ts';
import { Thinking, WakeMode } from '../config/schema.ts';
import { splitModel } from '../config/rules.ts';
import { compileBody } from '../config/ajv.ts';
import { didYouMean } from '../util/did-you-mean.ts';
import type { Generation } from '../generation/types.ts';
import { uuidv7 } from '../util/uuid7.ts';
import { MAIN_SESSION } from '../names.ts';

export const MAX_WAKE_TEXT = 20_000;
export const MAX_AGENT_MESSAGE = 1_000_000;
export const SESSION_KEY_RE = /^[A-Za-z0-9:._/-]{1,200}$/;
/** The name of an agent action that was given none. */
export const DEFAULT_AGENT_NAME = 'Hook';

export const WakeBody = Type.Object(
  {
    text: Type.String({ maxChars: MAX_WAKE_TEXT }),
    mode: Type.Optional(WakeMode),
  },
  { additionalProperties: false },
);

export const AgentBody = Type.Object(
  {
    message: Type.String({ maxChars: MAX_AGENT_MESSAGE }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    sessionKey: Type.Optional(Type.String()),
    wakeMode: Type.Optional(WakeMode),
    deliver: Type.Optional(Type.Boolean()),
    channel: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    to: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    thinking: Type.Optional(Thinking),
    timeoutSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 86400 })),
  },
  { additionalProperties: false },
);

/**
 * The `/hooks/agent` body: an agent action, and what only a direct request may ask, never a mapping:
 * `waitForCompletion` (docs/waiting.md; the pipeline's wait step reads it).
 */
export const AgentRequestBody = Type.Object(
  { ...AgentBody.properties, waitForCompletion: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export type WakeInput = Static<typeof WakeBody>;
export type AgentInput = Static<typeof AgentRequestBody>;
export const wakeFields = Object.keys(WakeBody.properties);
/** The fields of an agent action, the ones a mapping's templates and a transform may set. */
export const agentFields = Object.keys(AgentBody.properties);
const agentRequestFields = Object.keys(AgentRequestBody.properties);

const checkWake = compileBody<WakeInput>(WakeBody);
// a mapped action is checked by it too: it never carries the fields only a request may (toMappedAction copies agentFields)
const checkAgent = compileBody<AgentInput>(AgentRequestBody);

export interface WakeAction {
  kind: 'wake';
  text: string;
  mode: 'now' | 'next-heartbeat';
}

export interface AgentAction {
  kind: 'agent';
  message: string;
  name: string;
  sessionKey: string;
  wakeMode: 'now' | 'next-heartbeat';
  deliver: boolean;
  channel: string;
  to: string | null;
  model: string;
  thinking: string | null;
  timeoutSeconds: number;
  /** Set when `sessionKey` was made for this action: its session has no transcript yet. */
  newSession?: true;
}

export type Action = WakeAction | AgentAction;

/** Where an action's session key came from: policy applies to keys a caller chose. */
export type KeyOrigin = 'request' | 'mapping';

function fail(e: ErrorObject | undefined, known: string[]): never {
  if (!e) throw errors.invalidPayload('', 'invalid body');
  const field = e.instancePath.slice(1).split('/')[0] ?? '';
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(p.additionalProperty);
      const hint = didYouMean(key, known);
      throw errors.invalidPayload(key, `unknown field${hint ? ` (did you mean "${hint}"?)` : ''}`);
    }
    case 'required':
      throw errors.invalidPayload(String(p.missingProperty), 'is required');
    case 'type':
      if (!field) throw errors.invalidPayload('', 'the body must be a JSON object');
      throw errors.invalidPayload(field, `must be a ${String(p.type)}`);
    case 'maxLength':
      throw errors.invalidPayload(field, `must be at most ${String(p.limit)} characters`);
    case 'minLength':
      throw errors.invalidPayload(field, 'must not be empty');
    case 'anyOf':
    case 'const':
    case 'enum':
      throw errors.invalidPayload(field, `has an invalid value; allowed: ${allowedValues(field)}`);
    case 'exclusiveMinimum':
      throw errors.invalidPayload(field, 'must be a positive number');
    case 'maximum':
      throw errors.invalidPayload(field, `must be at most ${String(p.limit)}`);
    default:
      throw errors.invalidPayload(field, e.message ?? 'is invalid');
  }
}

function allowedValues(field: string): string {
  if (field === 'mode' || field === 'wakeMode') return '"now", "next-heartbeat"';
  if (field === 'thinking') return (Thinking.anyOf as { const: string }[]).map((s) => `"${s.const}"`).join(', ');
  return 'see the documentation';
}

function requireObject(input: unknown): asserts input is Record<string, unknown> {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    throw errors.invalidPayload('', 'the body must be a JSON object');
}

/** Validates a wake body; trims `text`. */
export function toWakeAction(input: unknown): WakeAction {
  requireObject(input);
  if (!Object.hasOwn(input, 'text')) throw errors.invalidPayload('text', 'is required');
  if (!checkWake(input)) fail(checkWake.errors?.[0], wakeFields);
  const text = input.text.trim();
  if (!text) throw errors.invalidPayload('text', 'must not be empty');
  return { kind: 'wake', text, mode: input.mode ?? 'now' };
}

/**
 * A named channel's recipient: `to` in the channel's form, and for a channel that cannot deliver
 * without one (a chat service), a `to` or a `session.defaultRoute` on that channel to take it from;
 * otherwise no recipient can ever be found, and the request is refused now rather than skipped later.
 */
function checkRecipient(gen: Generation, channel: string, to: string | undefined, deliver: boolean): void {
  const entry = gen.channels.get(channel)!;
  if (to !== undefined) {
    const problem = entry.channel.checkTo?.(to);
    if (problem) throw errors.invalidPayload('to', `must be ${problem} for channel "${channel}"`);
    return;
  }
  const route = gen.config.session.defaultRoute;
  if (deliver && entry.channel.limits?.requiresTo && !(route?.channel === channel && route.to))
    throw errors.invalidPayload('to', `is required for channel "${channel}" (no session.defaultRoute gives one for it)`);
}

/** Validates an agent body against the generation's config (channels, models, session policy). */
export function toAgentAction(input: unknown, gen: Generation, keyOrigin: KeyOrigin): AgentAction {
  requireObject(input);
  if (!Object.hasOwn(input, 'message')) throw errors.invalidPayload('message', 'is required');
  if (!checkAgent(input)) fail(checkAgent.errors?.[0], agentRequestFields);
  const cfg = gen.config;
  const message = input.message.trim();
  if (!message) throw errors.invalidPayload('message', 'must not be empty');

  let sessionKey: string;
  // time-ordered, so the transcript index (session_key, id) grows at one edge
  if (input.sessionKey === undefined) sessionKey = `hook:${uuidv7()}`;
  else {
    sessionKey = input.sessionKey;
    if (!SESSION_KEY_RE.test(sessionKey)) throw errors.invalidPayload('sessionKey', 'must be 1-200 characters of A-Z a-z 0-9 : . _ / -');
    if (sessionKey.toLowerCase() === MAIN_SESSION) throw errors.invalidPayload('sessionKey', 'must not name the main session');
    if (keyOrigin === 'request') {
      if (!cfg.hooks.allowRequestSessionKey)
        throw errors.invalidPayload('sessionKey', 'is not accepted from requests (hooks.allowRequestSessionKey is false)');
      const prefixes = cfg.hooks.allowedSessionKeyPrefixes;
      if (prefixes && !prefixes.some((p) => sessionKey.startsWith(p)))
        throw errors.invalidPayload('sessionKey', `must start with one of: ${prefixes.map((p) => `"${p}"`).join(', ')}`);
    }
  }

  const channel = input.channel ?? 'last';
  if (channel !== 'last' && !gen.channels.has(channel))
    throw errors.invalidPayload('channel', `must be "last" or a configured channel (${[...gen.channels.keys()].join(', ')})`);
  // a named channel checks its recipient now; with `last` the channel is known only at delivery (runtime/routes.ts)
  if (channel !== 'last') checkRecipient(gen, channel, input.to, input.deliver ?? true);

  let model = cfg.agents.defaults.model;
  if (input.model !== undefined) {
    model = input.model;
    const parts = splitModel(model);
    if (!parts) throw errors.invalidPayload('model', 'must have the form provider/model');
    // the request's own value is not repeated (an error answer never echoes what was sent)
    if (!gen.providers.has(parts.provider))
      throw errors.invalidPayload('model', `names a provider that is not configured; configured: ${[...gen.providers.keys()].join(', ')}`);
    if (gen.models && !gen.models.has(model)) throw errors.modelNotAllowed();
  }

  const action: AgentAction = {
    kind: 'agent',
    message,
    name: input.name?.trim() || DEFAULT_AGENT_NAME,
    sessionKey,
    wakeMode: input.wakeMode ?? 'now',
    deliver: input.deliver ?? true,
    channel,
    to: input.to ?? null,
    model,
    thinking: input.thinking ?? cfg.agents.defaults.thinking ?? null,
    timeoutSeconds: input.timeoutSeconds ?? cfg.agents.defaults.timeoutSeconds,
  };
  if (input.sessionKey === undefined) action.newSession = true;
  return action;
}

const FIELDS_OF = { wake: new Set(['kind', ...wakeFields]), agent: new Set(['kind', ...agentFields]) } as const;
const ACTION_KEYS = new Set([...FIELDS_OF.wake, ...FIELDS_OF.agent]);

/**
 * A mapping's draft (its templates' fields, and what its transform returned over them as `overrides`)
 * as a validated action, checked exactly like a direct request's body (400 on failure).
 */
export function toMappedAction(
  partial: Record<string, unknown>,
  hookName: string,
  gen: Generation,
  overrides: Record<string, unknown> | undefined,
): Action {
  const kind = partial.kind;
  if (kind !== 'wake' && kind !== 'agent') throw errors.invalidPayload('kind', 'must be "wake" or "agent"');
  for (const k of Object.keys(overrides ?? {})) {
    if (!ACTION_KEYS.has(k)) throw errors.invalidPayload(k, 'unknown field in the action a transform returned');
    // a field of the other kind is a mistake in the transform (e.g. `text` on an agent action)
    if (!FIELDS_OF[kind].has(k)) throw errors.invalidPayload(k, `does not apply to a ${kind} action (the transform returned it)`);
  }
  if (kind === 'wake') {
    const input: Record<string, unknown> = { text: partial.text };
    const mode = partial.mode ?? partial.wakeMode;
    if (mode !== undefined) input.mode = mode;
    return toWakeAction(input);
  }
  const input: Record<string, unknown> = {};
  for (const f of agentFields) if (partial[f] !== undefined) input[f] = partial[f];
  if (input.name === undefined) input.name = hookName;
  return toAgentAction(input, gen, 'mapping');
}
