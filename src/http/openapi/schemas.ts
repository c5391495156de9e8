/**
 * TypeBox schemas of the HTTP answers, for the OpenAPI document (`GET /api/openapi.json`). Request
 * bodies are not repeated here: the document takes the schemas that validate them (`WakeBody`,
 * `AgentBody` in runtime/actions.ts). Each schema here is named by its `$id`, which becomes its name
 * under `components/schemas`.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { WakeMode } from '../../config/schema.ts';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Id = Type.String({ minLength: 1 });
const Epoch = Type.Integer({ description: 'milliseconds since the epoch' });
const Ok = Type.Literal(true);

export const ErrorBody = Type.Object(
  {
    ok: Type.Literal(false),
    error: Type.String(),
    code: Type.String({ description: 'a stable code: UNAUTHORIZED, NOT_FOUND, INVALID_PAYLOAD, CONFLICT, …' }),
    field: Type.Optional(Type.String({ description: 'the request field at fault' })),
  },
  { $id: 'Error' },
);

export const WakeAnswer = Type.Object(
  {
    ok: Ok,
    mode: WakeMode,
    eventId: Id,
    eventOutcome: Type.Union([Type.Literal('queued'), Type.Literal('coalesced')], {
      description: 'coalesced: the same wake was the newest pending event already; eventId is that event and nothing new was stored',
    }),
  },
  { $id: 'WakeAnswer' },
);
/** What a request that waited is told of its run (docs/waiting.md). */
export const Completion = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('error'), Type.Literal('timeout')]),
    replyDisposition: Type.Union([Type.Literal('visible'), Type.Literal('silent'), Type.Literal('empty')], {
      description:
        'visible: a reply set out to be delivered; silent: a reply not delivered (deliver false, an acknowledgement); empty: no reply text',
    }),
    delivery: Type.Object(
      {
        status: Type.Union([Type.Literal('sent'), Type.Literal('skipped'), Type.Literal('failed')]),
        attempts: Type.Integer({ minimum: 0 }),
      },
      { additionalProperties: false },
    ),
    reply: Type.Optional(Type.String({ description: 'the reply text, only with hooks.replyInResponse' })),
  },
  { $id: 'Completion', additionalProperties: false },
);
export const AgentAnswer = Type.Object(
  {
    ok: Ok,
    runId: Id,
    sessionKey: Type.String(),
    completion: Type.Optional(
      Type.Union([Type.Ref(Completion), Type.Null()], {
        description: 'with waitForCompletion: the run and its delivery ended (200), or null past hooks.waitForCompletionSeconds (202)',
      }),
    ),
  },
  { $id: 'AgentAnswer' },
);
export const ManyAnswer = Type.Object({ ok: Ok, runIds: Type.Array(Id), eventIds: Type.Array(Id) }, { $id: 'ManyAnswer' });
/** What a hook request may be answered with on success (a verifier's handshake answers its own JSON). */
export const HookAnswer = Type.Union([Type.Ref(WakeAnswer), Type.Ref(AgentAnswer), Type.Ref(ManyAnswer)], { $id: 'HookAnswer' });

const RunStatus = Type.Union(['queued', 'running', 'ok', 'error', 'timeout'].map((s) => Type.Literal(s)));
const DeliveryStatus = Type.Union(['pending', 'sent', 'skipped', 'failed'].map((s) => Type.Literal(s)));

export const Run = Type.Object(
  {
    id: Id,
    kind: Type.Union([Type.Literal('hook'), Type.Literal('heartbeat'), Type.Literal('deliver')], {
      description: 'a hook\'s agent run, a heartbeat, or a delivery without a model (action "deliver")',
    }),
    hookName: Type.String(),
    label: Type.String(),
    trusted: Type.Boolean(),
    nameTrusted: Type.Optional(Type.Boolean()),
    hookId: Type.Optional(Type.String({ description: 'the hook it came from: agent or a mapping id (absent on heartbeats)' })),
    sessionKey: Type.String(),
    message: Type.String(),
    model: Type.String(),
    thinking: Nullable(Type.String()),
    timeoutSeconds: Type.Number(),
    wakeMode: WakeMode,
    deliver: Type.Boolean(),
    channel: Type.String(),
    to: Nullable(Type.String()),
    agentId: Nullable(Type.String({ description: 'the agent it runs on; null for a delivery without a model' })),
    sessionMode: Type.Union([Type.Literal('persistent'), Type.Literal('isolated')], {
      description: 'isolated: it started with no transcript',
    }),
    status: RunStatus,
    attempts: Type.Integer({ minimum: 0 }),
    createdAt: Epoch,
    startedAt: Nullable(Epoch),
    finishedAt: Nullable(Epoch),
    reply: Nullable(Type.String()),
    summary: Nullable(Type.String()),
    error: Nullable(Type.String()),
    usage: Nullable(
      Type.Object(
        { inputTokens: Type.Integer({ minimum: 0 }), outputTokens: Type.Integer({ minimum: 0 }) },
        { additionalProperties: false, description: 'the tokens the provider reported, set when the run ends; null when it reported none' },
      ),
    ),
    delivery: Type.Object(
      {
        status: DeliveryStatus,
        reason: Nullable(Type.String()),
        channel: Nullable(Type.String()),
        to: Nullable(Type.String()),
        attempts: Type.Integer({ minimum: 0 }),
      },
      { additionalProperties: false },
    ),
    forwarded: Nullable(
      Type.Object(
        { runId: Nullable(Type.String()) },
        { additionalProperties: false, description: "the other gateway's run, when the `gateway` provider forwarded this one" },
      ),
    ),
  },
  { $id: 'Run', additionalProperties: false },
);

/** One lifecycle event of a run sent to a callback, and how its sending goes (docs/callbacks.md, "Delivery"). */
export const RunCallback = Type.Object(
  {
    id: Type.String({ description: 'the webhook-id the event is sent with' }),
    callback: Type.String({ description: "the callback's id" }),
    type: Type.Union(['run.completed', 'run.failed', 'delivery.failed'].map((t) => Type.Literal(t))),
    status: Type.Union(['pending', 'sent', 'failed'].map((t) => Type.Literal(t))),
    attempts: Type.Integer({ minimum: 0 }),
    lastError: Nullable(Type.String()),
    nextAttemptAt: Nullable(Epoch),
    createdAt: Epoch,
    updatedAt: Epoch,
  },
  { $id: 'RunCallback', additionalProperties: false },
);

export const SystemEvent = Type.Object(
  {
    id: Id,
    source: Type.String(),
    text: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('consumed')]),
    createdAt: Epoch,
    consumedAt: Nullable(Epoch),
    heartbeatId: Nullable(Type.String()),
    runId: Nullable(Type.String()),
  },
  { $id: 'Event', additionalProperties: false },
);

export const SessionMessage = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    sessionKey: Type.String(),
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
    content: Type.String(),
    runId: Nullable(Type.String()),
    createdAt: Epoch,
  },
  { $id: 'Message', additionalProperties: false },
);

export const KeptAction = Type.Union(
  [
    Type.Object({ kind: Type.Literal('wake'), mode: WakeMode, eventId: Id }, { additionalProperties: false }),
    Type.Object(
      {
        kind: Type.Union([Type.Literal('agent'), Type.Literal('deliver')]),
        name: Type.String(),
        sessionKey: Type.String(),
        channel: Type.String(),
        to: Nullable(Type.String()),
        deliver: Type.Boolean(),
        runId: Id,
      },
      { additionalProperties: false },
    ),
  ],
  { $id: 'KeptAction' },
);

const requestFields = {
  id: Id,
  hook: Type.String({ description: 'the hook name after the prefix' }),
  mappingId: Nullable(Type.String({ description: 'the mapping that took it; null for wake and agent' })),
  url: Type.String({ description: 'path and query, without a token parameter' }),
  receivedAt: Epoch,
  status: Type.Integer({ description: 'the status the request was answered with' }),
  replayOf: Nullable(Type.String()),
  reason: Nullable(
    Type.String({ description: "why nothing ran: a refused request's error code, or why a 204 ran nothing; null when it stored work" }),
  ),
  bodyBytes: Type.Integer({ minimum: 0, description: 'the size of the body as received' }),
  runIds: Type.Array(Id),
  eventIds: Type.Array(Id),
};

export const KeptRequestSummary = Type.Object(requestFields, { $id: 'KeptRequestSummary', additionalProperties: false });

export const KeptRequest = Type.Object(
  {
    ...requestFields,
    headers: Type.Record(Type.String(), Type.String(), {
      description: 'as received, without credentials (authorization, cookies, tokens, signatures)',
    }),
    actions: Type.Array(Type.Ref(KeptAction)),
    body: Type.String({ description: 'the raw body: as text when it is UTF-8, else base64 (bodyEncoding)' }),
    bodyEncoding: Type.Union([Type.Literal('utf8'), Type.Literal('base64')]),
    bodyKept: Type.Boolean({
      description: 'false for a refused request whose credential had not passed: its body is not kept, bodyBytes is its size',
    }),
  },
  { $id: 'KeptRequest', additionalProperties: false },
);

export const Status = Type.Object(
  {
    ok: Ok,
    generation: Type.Object({
      id: Type.Integer(),
      loadedAt: Type.String({ format: 'date-time' }),
      file: Nullable(Type.String()),
      warnings: Type.Array(Type.String()),
    }),
    lastReloadError: Nullable(Type.Object({ at: Type.String({ format: 'date-time' }), issues: Type.Array(Type.Unknown()) })),
    hooks: Type.Object({ enabled: Type.Boolean(), path: Type.String(), mappings: Type.Integer() }),
    counts: Type.Object({
      events: Type.Object({ pending: Type.Integer(), consumed: Type.Integer() }),
      runs: Type.Record(Type.String(), Type.Integer()),
      outbox: Type.Object({ pending: Type.Integer(), failed: Type.Integer() }),
    }),
  },
  { $id: 'Status', description: 'plus runtime figures (uptime, memory, runner, transforms, storage)' },
);

export const ReplayAnswer = Type.Object(
  {
    ok: Ok,
    replayOf: Id,
    requestId: Type.Optional(Type.String({ description: 'the kept request of the replay (absent when requests are not kept)' })),
    skipped: Type.Optional(Type.Literal(true, { description: 'the mapping skipped it (a sender would get 204)' })),
  },
  { $id: 'ReplayAnswer', description: 'plus the fields of the hook answer a new request would get' },
);

export const RetryAnswer = Type.Object(
  { ok: Ok, runId: Id, sessionKey: Type.String(), retryOf: Id },
  { $id: 'RetryAnswer', additionalProperties: false },
);

export const RedeliverAnswer = Type.Object(
  { ok: Ok, runId: Id, deliveryId: Id, channel: Type.String(), to: Nullable(Type.String()) },
  { $id: 'RedeliverAnswer', additionalProperties: false },
);

/** Every named schema, for `components/schemas`. */
export const namedSchemas: TSchema[] = [
  ErrorBody,
  WakeAnswer,
  Completion,
  AgentAnswer,
  ManyAnswer,
  HookAnswer,
  Run,
  RunCallback,
  SystemEvent,
  SessionMessage,
  KeptAction,
  KeptRequestSummary,
  KeptRequest,
  Status,
  ReplayAnswer,
  RetryAnswer,
  RedeliverAnswer,
];
