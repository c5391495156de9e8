/**
 * The console's request and answer schemas (TypeBox): `POST /api/try`'s body is validated with
 * its schema, and the OpenAPI document describes the console's endpoints with these.
 */
import { Type, type Static } from '@sinclair/typebox';

export const TryRequest = Type.Object(
  {
    hook: Type.String({ minLength: 1, maxLength: 1000, description: 'the hook name after the hooks path: wake, agent, or a mapping path' }),
    body: Type.Optional(Type.String({ description: 'the request body as text (default {})' })),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String(), { description: 'request headers by name; content-type is application/json unless given' }),
    ),
    skipVerify: Type.Optional(
      Type.Boolean({ description: "run a mapping with verify without checking the request's signature (the result says so)" }),
    ),
  },
  { additionalProperties: false },
);
export type TryRequestInput = Static<typeof TryRequest>;

const MatchExplanation = Type.Object({
  id: Type.String(),
  origin: Type.String(),
  matched: Type.Boolean(),
  reason: Type.Optional(Type.String()),
});

/** What a dry run shows (src/intake/dry-run.ts `DryRun`); `hook-intake try --json` prints the same. */
export const DryRunResult = Type.Object({
  hook: Type.String(),
  matching: Type.Array(MatchExplanation),
  status: Type.Integer(),
  direct: Type.Optional(Type.Literal(true)),
  text: Type.Optional(Type.String()),
  body: Type.Optional(Type.Unknown()),
  actions: Type.Optional(
    Type.Array(Type.Object({ kind: Type.Union([Type.Literal('wake'), Type.Literal('agent')]) }, { additionalProperties: true })),
  ),
  code: Type.Optional(Type.String()),
  error: Type.Optional(Type.String()),
  transformError: Type.Optional(Type.Object({ message: Type.String(), stack: Type.Array(Type.String()) })),
  signature: Type.Optional(Type.Literal('not checked')),
  event: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
});

export const TryAnswer = Type.Object({
  ok: Type.Literal(true),
  result: DryRunResult,
  text: Type.String({ description: 'the dry run as hook-intake try prints it' }),
});

const Count = Type.Integer({ minimum: 0 });
const ReloadError = Type.Union([
  Type.Null(),
  Type.Object({
    at: Type.String(),
    issues: Type.Array(
      Type.Object({ file: Type.String(), path: Type.String(), message: Type.String(), line: Type.Optional(Type.Integer()) }),
    ),
  }),
]);

export const StatsAnswer = Type.Object({
  ok: Type.Literal(true),
  requestsPerMinute: Type.Array(Type.Object({ at: Type.String({ format: 'date-time' }), byStatus: Type.Record(Type.String(), Count) }), {
    description: 'the last 60 minutes, oldest first: hook answers of each minute by status, counted by this instance',
  }),
  runs: Type.Object({ queued: Count, running: Count }),
  runner: Type.Union([Type.Null(), Type.Object({ queued: Count, running: Count })]),
  outbox: Type.Object({ pending: Count, failed: Count }),
  events: Type.Object({ pending: Count, consumed: Count }),
  generation: Type.Object({ id: Count, loadedAt: Type.String({ format: 'date-time' }), mappings: Count }),
  hooks: Type.Array(
    Type.Object({
      endpoint: Type.String({ description: 'POST here (… for a mapping that matches any path)' }),
      mapping: Type.String(),
      preset: Type.Union([Type.String(), Type.Null()], { description: 'the preset it comes from' }),
      credential: Type.String({ description: '"hook token" or "signature: <type>"' }),
      events: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'the event types it takes; null: all' }),
    }),
    { description: 'the hooks the serving configuration answers, in the order they are tried' },
  ),
  lastReloadError: ReloadError,
});

const Nullable = (s: ReturnType<typeof Type.String>) => Type.Union([s, Type.Null()]);
export const MappingsAnswer = Type.Object({
  ok: Type.Literal(true),
  hooksPath: Type.String(),
  mappings: Type.Array(
    Type.Object({
      id: Type.String(),
      origin: Type.String(),
      path: Nullable(Type.String()),
      action: Type.Union([Type.Literal('wake'), Type.Literal('agent')]),
      transform: Nullable(Type.String({ description: "the transform module's file name" })),
      verify: Nullable(Type.String({ description: "the verifier's type" })),
    }),
  ),
});

export const SessionAnswer = Type.Object({
  ok: Type.Literal(true),
  csrfToken: Type.String({ description: 'send it as X-CSRF-Token with every call that changes state' }),
  expiresAt: Type.String({ format: 'date-time', description: 'when the session ends if unused from now on' }),
});
