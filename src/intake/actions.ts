/**
 * The actions and their validation: a wake, an agent run, and a delivery without a model. A direct
 * `/hooks/wake` or `/hooks/agent` body and an action produced by a mapping pipeline go through the
 * same functions, so they are checked exactly alike (docs/http.md, "POST {hooks.path}/<name>").
 */
import type { ErrorObject } from 'ajv';
import { Type, type Static } from '@sinclair/typebox';
import { errors } from '../errors.ts';
import { AGENT_ID_PATTERN, SessionMode, Thinking, WakeMode } from '../config/schema.ts';
import { chooseAgent, chooseModel } from './agent.ts';
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
    agentId: Type.Optional(Type.String({ pattern: AGENT_ID_PATTERN })),
    sessionMode: Type.Optional(SessionMode),
  },
  { additionalProperties: false },
);

/** A delivery without a model (a mapping's `action: "deliver"`): the message sent as it is. */
export const DeliverBody = Type.Object(
  {
    message: Type.String({ maxChars: MAX_AGENT_MESSAGE }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    sessionKey: Type.Optional(Type.String()),
    channel: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    to: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
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
export const deliverFields = Object.keys(DeliverBody.properties);

const checkWake = compileBody<WakeInput>(WakeBody);
// a mapped action is checked by it too: it never carries the fields only a request may (toMappedAction copies agentFields)
const checkAgent = compileBody<AgentInput>(AgentRequestBody);
const checkDeliver = compileBody<Static<typeof DeliverBody>>(DeliverBody);

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
  /** The agent the run runs on (docs/agents.md). */
  agentId: string;
  /** `isolated`: the run starts with no transcript (its session's runs still go one at a time, in order). */
  sessionMode: 'persistent' | 'isolated';
  /** Set when `sessionKey` was made for this action: its session has no transcript yet. */
  newSession?: true;
}

/** A message delivered as it is, with no model call (a mapping's `action: "deliver"`). */
export interface DeliverAction {
  kind: 'deliver';
  message: string;
  name: string;
  sessionKey: string;
  channel: string;
  to: string | null;
  newSession?: true;
}

export type Action = WakeAction | AgentAction | DeliverAction;

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
  if (field === 'sessionMode') return '"persistent", "isolated"';
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

/** A session key a caller or mapping chose, checked (and the caller's against the session-key policy); a new one when none. */
function sessionKeyOf(given: string | undefined, gen: Generation, keyOrigin: KeyOrigin): string {
  // time-ordered, so the transcript index (session_key, id) grows at one edge
  if (given === undefined) return `hook:${uuidv7()}`;
  if (!SESSION_KEY_RE.test(given)) throw errors.invalidPayload('sessionKey', 'must be 1-200 characters of A-Z a-z 0-9 : . _ / -');
  if (given.toLowerCase() === MAIN_SESSION) throw errors.invalidPayload('sessionKey', 'must not name the main session');
  if (keyOrigin === 'request') {
    const hc = gen.config.hooks;
    if (!hc.allowRequestSessionKey)
      throw errors.invalidPayload('sessionKey', 'is not accepted from requests (hooks.allowRequestSessionKey is false)');
    const prefixes = hc.allowedSessionKeyPrefixes;
    if (prefixes && !prefixes.some((p) => given.startsWith(p)))
      throw errors.invalidPayload('sessionKey', `must start with one of: ${prefixes.map((p) => `"${p}"`).join(', ')}`);
  }
  return given;
}

/** The channel a reply goes to: `last` or a configured one, whose recipient is checked now when it is named. */
function channelOf(gen: Generation, channel: string | undefined, to: string | undefined, deliver: boolean): string {
  const c = channel ?? 'last';
  if (c !== 'last' && !gen.channels.has(c))
    throw errors.invalidPayload('channel', `must be "last" or a configured channel (${[...gen.channels.keys()].join(', ')})`);
  // a named channel checks its recipient now; with `last` the channel is known only at delivery (runtime/routes.ts)
  if (c !== 'last') checkRecipient(gen, c, to, deliver);
  return c;
}

/** Validates an agent body against the generation's config (agents, channels, models, session policy). */
export function toAgentAction(input: unknown, gen: Generation, keyOrigin: KeyOrigin): AgentAction {
  requireObject(input);
  if (!Object.hasOwn(input, 'message')) throw errors.invalidPayload('message', 'is required');
  if (!checkAgent(input)) fail(checkAgent.errors?.[0], agentRequestFields);
  const message = input.message.trim();
  if (!message) throw errors.invalidPayload('message', 'must not be empty');
  const sessionKey = sessionKeyOf(input.sessionKey, gen, keyOrigin);
  const channel = channelOf(gen, input.channel, input.to, input.deliver ?? true);
  const agent = chooseAgent(gen, input.agentId);
  const action: AgentAction = {
    kind: 'agent',
    message,
    name: input.name?.trim() || DEFAULT_AGENT_NAME,
    sessionKey,
    wakeMode: input.wakeMode ?? 'now',
    deliver: input.deliver ?? true,
    channel,
    to: input.to ?? null,
    model: chooseModel(gen, agent, input.model),
    thinking: input.thinking ?? agent.thinking,
    timeoutSeconds: input.timeoutSeconds ?? agent.timeoutSeconds,
    agentId: agent.id,
    sessionMode: input.sessionMode ?? 'persistent',
  };
  if (input.sessionKey === undefined) action.newSession = true;
  return action;
}

/** Validates a delivery without a model: its message, where it goes, its name and session. */
export function toDeliverAction(input: unknown, gen: Generation): DeliverAction {
  requireObject(input);
  if (!Object.hasOwn(input, 'message')) throw errors.invalidPayload('message', 'is required');
  if (!checkDeliver(input)) fail(checkDeliver.errors?.[0], deliverFields);
  const message = input.message.trim();
  if (!message) throw errors.invalidPayload('message', 'must not be empty');
  const action: DeliverAction = {
    kind: 'deliver',
    message,
    name: input.name?.trim() || DEFAULT_AGENT_NAME,
    sessionKey: sessionKeyOf(input.sessionKey, gen, 'mapping'),
    channel: channelOf(gen, input.channel, input.to, true),
    to: input.to ?? null,
  };
  if (input.sessionKey === undefined) action.newSession = true;
  return action;
}

const FIELDS_OF = {
  wake: new Set(['kind', ...wakeFields]),
  agent: new Set(['kind', ...agentFields]),
  deliver: new Set(['kind', ...deliverFields]),
} as const;
const ACTION_KEYS = new Set([...FIELDS_OF.wake, ...FIELDS_OF.agent, ...FIELDS_OF.deliver]);

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
  if (kind !== 'wake' && kind !== 'agent' && kind !== 'deliver')
    throw errors.invalidPayload('kind', 'must be "wake", "agent" or "deliver"');
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
  for (const f of kind === 'agent' ? agentFields : deliverFields) if (partial[f] !== undefined) input[f] = partial[f];
  if (input.name === undefined) input.name = hookName;
  return kind === 'agent' ? toAgentAction(input, gen, 'mapping') : toDeliverAction(input, gen);
}
