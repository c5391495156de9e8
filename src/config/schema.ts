/**
 * The configuration schema: the single source of truth. ajv validates a config
 * file against `ConfigSchema` (filling the defaults in place) and TypeScript
 * derives `Config` from the same object, so the two can never disagree.
 *
 * Every key, its default and its rule are documented in docs/configuration.md, "Keys".
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { StorageSchema } from './storage.ts';

const strict = { additionalProperties: false } as const;

/** A value that reads an environment variable or a file is resolved before validation. */
const Secret = (description: string) => Type.String({ minLength: 1, description });

const ThinkingLevels = ['off', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
export const Thinking = Type.Union(ThinkingLevels.map((l) => Type.Literal(l)));
export const WakeMode = Type.Union([Type.Literal('now'), Type.Literal('next-heartbeat')]);

/** A rule over one value (a header or a payload path). Literals compare by equality. */
export const Rule = Type.Recursive(
  (Self) =>
    Type.Union([
      Type.String(),
      Type.Number(),
      Type.Boolean(),
      Type.Null(),
      Type.Object({ equals: Type.Unknown() }, strict),
      Type.Object({ exists: Type.Boolean() }, strict),
      Type.Object({ in: Type.Array(Type.Unknown(), { minItems: 1 }) }, strict),
      Type.Object({ regex: Type.String({ minLength: 1 }), flags: Type.Optional(Type.String({ pattern: '^[imsu]*$' })) }, strict),
      Type.Object({ all: Type.Array(Self, { minItems: 1 }) }, strict),
      Type.Object({ any: Type.Array(Self, { minItems: 1 }) }, strict),
      Type.Object({ not: Self }, strict),
    ]),
  { $id: 'Rule' },
);

const RuleRef = Type.Ref(Rule);

/** Schemas referenced by `$ref` from `ConfigSchema`; add them to any validator that compiles it. */
export const referencedSchemas = [Rule];

/** Which requests a mapping owns. Every part present must pass. */
export const Match = Type.Recursive(
  (Self) =>
    Type.Object(
      {
        path: Type.Optional(Type.String({ minLength: 1 })),
        source: Type.Optional(Type.String({ minLength: 1 })),
        headers: Type.Optional(Type.Record(Type.String(), RuleRef)),
        payload: Type.Optional(Type.Record(Type.String(), RuleRef)),
        all: Type.Optional(Type.Array(Self, { minItems: 1 })),
        any: Type.Optional(Type.Array(Self, { minItems: 1 })),
        not: Type.Optional(Self),
      },
      strict,
    ),
  { $id: 'Match' },
);

/** An id of an agent (`agents.list[].id`, `agentId`): short, plain. */
export const AGENT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

/** One entry of `agents.list` (docs/agents.md): what the defaults do not say for it. */
export const AgentEntry = Type.Object(
  {
    id: Type.String({ pattern: AGENT_ID_PATTERN }),
    model: Type.Optional(
      Type.String({ minLength: 3, description: 'provider/model: its runs use it unless a request or mapping names one' }),
    ),
    models: Type.Optional(Type.Array(Type.String({ minLength: 3 }), { minItems: 1, description: 'the only models its runs may select' })),
    instructions: Type.Optional(Type.String({ minLength: 1, description: 'what the agent is told before every run (a system prompt)' })),
    timeoutSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 86400 })),
    thinking: Type.Optional(Thinking),
    default: Type.Optional(Type.Boolean({ description: 'the agent of a request or mapping that names none (else the first)' })),
  },
  strict,
);
export type AgentEntryConfig = Static<typeof AgentEntry>;

export const SessionMode = Type.Union([Type.Literal('persistent'), Type.Literal('isolated')]);

export const Mapping = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$' })),
    match: Type.Optional(Match),
    action: Type.Union([Type.Literal('wake'), Type.Literal('agent'), Type.Literal('deliver')], { default: 'agent' }),
    agentId: Type.Optional(Type.String({ minLength: 1, description: 'the agent of its runs (templated; docs/agents.md)' })),
    sessionMode: Type.Optional(SessionMode),
    wakeMode: Type.Optional(WakeMode),
    name: Type.Optional(Type.String({ minLength: 1 })),
    sessionKey: Type.Optional(Type.String({ minLength: 1 })),
    messageTemplate: Type.Optional(Type.String()),
    textTemplate: Type.Optional(Type.String()),
    deliver: Type.Optional(Type.Boolean()),
    channel: Type.Optional(Type.String({ minLength: 1 })),
    to: Type.Optional(Type.String({ minLength: 1 })),
    model: Type.Optional(Type.String({ minLength: 1 })),
    thinking: Type.Optional(Type.String({ minLength: 1 })),
    timeoutSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 86400 })),
    transform: Type.Optional(
      Type.Object(
        {
          module: Type.String({ minLength: 1 }),
          export: Type.Optional(Type.String({ minLength: 1 })),
          timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 600000 })),
        },
        strict,
      ),
    ),
    forEach: Type.Optional(Type.String({ minLength: 1 })),
    allowUnsafeExternalContent: Type.Optional(Type.Boolean()),
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: 'source shown in the safety boundary' })),
    // the verifier `type` names validates the other keys (its options)
    verify: Type.Optional(Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true })),
    rateLimit: Type.Optional(Type.Object({ max: Type.Integer({ minimum: 1 }), perSeconds: Type.Number({ exclusiveMinimum: 0 }) }, strict)),
    event: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'a template naming the event type, e.g. {{headers.x-github-event}} (docs/mappings.md, "Events")',
      }),
    ),
    events: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        minItems: 1,
        description: 'the event types taken (by `event`); others answer 204 and are kept with the reason',
      }),
    ),
    idempotencyKey: Type.Optional(
      Type.String({
        minLength: 1,
        description: "a template naming the sender's delivery id, e.g. {{id}}; replaces the headers' key when it renders",
      }),
    ),
    maxChars: Type.Optional(
      Type.Integer({
        minimum: 100,
        maximum: 1000000,
        description: 'most characters of hook content inside the boundary; the rest is cut and counted',
      }),
    ),
    callbacks: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        uniqueItems: true,
        description: "ids of callbacks that also get this hook's events (docs/callbacks.md)",
      }),
    ),
  },
  strict,
);

export const CALLBACK_TYPES = ['run.completed', 'run.failed', 'delivery.failed', 'request.rejected'] as const;

/** A callback: where lifecycle events go, signed with its secret (docs/callbacks.md, "Config"). */
export const Callback = Type.Object(
  {
    id: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$' }),
    url: Type.String({ pattern: '^https?://', description: 'where events are posted' }),
    secret: Secret('the Standard Webhooks signing secret (whsec_…)'),
    types: Type.Array(Type.Union(CALLBACK_TYPES.map((t) => Type.Literal(t))), { minItems: 1, uniqueItems: true }),
    hooks: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        uniqueItems: true,
        description: 'agent, wake or mapping ids whose events it gets (absent: every hook)',
      }),
    ),
    allowPrivateNetwork: Type.Boolean({ default: false, description: 'let the URL resolve to a loopback, private or link-local address' }),
  },
  strict,
);

/**
 * An entry of `hooks.presets` beyond a bare name: the preset and its options (docs/presets.md). The
 * options every preset takes are here; a preset's own (`publicKey`, `publicUrl`) are checked against
 * what it declares when the generation is built.
 */
export const PresetEntry = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    secret: Type.Optional(Secret('the signing secret the provider shows')),
    secrets: Type.Optional(Type.Array(Secret('a signing secret (several while rotating)'), { minItems: 1 })),
    path: Type.Optional(Type.String({ minLength: 1, description: 'the hook name it answers (default: its name)' })),
    events: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    action: Type.Optional(Type.Union([Type.Literal('wake'), Type.Literal('agent')])),
    channel: Type.Optional(Type.String({ minLength: 1 })),
    to: Type.Optional(Type.String({ minLength: 1 })),
    model: Type.Optional(Type.String({ minLength: 1 })),
    sessionKey: Type.Optional(Type.String({ minLength: 1 })),
    maxChars: Type.Optional(Type.Integer({ minimum: 100, maximum: 1000000 })),
  },
  { additionalProperties: true },
);
/** The options a preset declares beyond the common ones arrive as further keys. */
export type PresetEntryConfig = Static<typeof PresetEntry> & Record<string, unknown>;

const HttpUrl = (fallback: string) => Type.String({ default: fallback, pattern: '^https?://' });

/** `hooks.gmail`: the Gmail watcher (`hook-intake webhooks gmail …`) and the gmail preset's settings. */
const Gmail = Type.Object(
  {
    account: Type.Optional(Type.String({ minLength: 1, description: 'the mailbox watched, e.g. ops@example.com' })),
    label: Type.String({ default: 'INBOX', minLength: 1 }),
    topic: Type.Optional(Type.String({ minLength: 1, description: 'the Pub/Sub topic Gmail publishes to' })),
    mode: Type.Union([Type.Literal('push'), Type.Literal('pull')], {
      default: 'push',
      description: 'push: serve the Pub/Sub push endpoint; pull: pull from the subscription (no public URL)',
    }),
    subscription: Type.Optional(
      Type.String({ minLength: 1, description: "the Pub/Sub subscription: projects/<p>/subscriptions/<s>, or <s> in the topic's project" }),
    ),
    pushToken: Type.Optional(Secret('token a Pub/Sub push carries as ?token=')),
    hookUrl: Type.Optional(Type.String({ pattern: '^https?://', description: 'where the watcher posts the preset payload' })),
    includeBody: Type.Boolean({ default: true }),
    maxBytes: Type.Integer({ default: 20000, minimum: 1 }),
    // Gmail ends a watch after 7 days: a longer period would let it lapse
    renewEveryMinutes: Type.Integer({ default: 720, minimum: 1, maximum: 10080 }),
    serve: Type.Object(
      {
        bind: Type.String({ default: '127.0.0.1', minLength: 1 }),
        port: Type.Integer({ default: 8788, minimum: 0, maximum: 65535 }),
        path: Type.String({ default: '/gmail-pubsub', pattern: '^/' }),
      },
      { ...strict, default: {} },
    ),
    pull: Type.Object(
      {
        maxMessages: Type.Integer({ default: 10, minimum: 1, maximum: 1000, description: 'most messages one pull asks for' }),
      },
      { ...strict, default: {} },
    ),
    oauth: Type.Optional(
      Type.Object(
        {
          clientId: Type.Optional(Type.String({ minLength: 1 })),
          clientSecret: Type.Optional(Secret('OAuth client secret')),
          refreshToken: Type.Optional(Secret('OAuth refresh token')),
        },
        strict,
      ),
    ),
    push: Type.Optional(
      Type.Object(
        {
          audience: Type.Optional(Type.String({ minLength: 1 })),
          serviceAccountEmail: Type.Optional(Type.String({ minLength: 1 })),
        },
        strict,
      ),
    ),
    apiBaseUrl: HttpUrl('https://gmail.googleapis.com'),
    pubsubBaseUrl: HttpUrl('https://pubsub.googleapis.com'),
    tokenUrl: HttpUrl('https://oauth2.googleapis.com/token'),
    jwksUrl: HttpUrl('https://www.googleapis.com/oauth2/v3/certs'),
    authUrl: HttpUrl('https://accounts.google.com/o/oauth2/v2/auth'),
    model: Type.Optional(Type.String({ minLength: 1, description: 'model of the gmail preset runs' })),
    allowUnsafeExternalContent: Type.Optional(Type.Boolean({ description: 'turns the safety boundary off for mail (dangerous)' })),
  },
  strict,
);

const Route = Type.Object({ channel: Type.String({ minLength: 1 }), to: Type.Optional(Type.String({ minLength: 1 })) }, strict);

/** A plugin-owned object: `type` names the plugin entry, the rest is that plugin's config. */
const PluginSlice = (typeRequired: boolean) =>
  Type.Object(typeRequired ? { type: Type.String({ minLength: 1 }) } : { type: Type.Optional(Type.String({ minLength: 1 })) }, {
    additionalProperties: true,
  });

export const ConfigSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    gateway: Type.Object(
      {
        bind: Type.String({ default: '127.0.0.1', minLength: 1 }),
        port: Type.Integer({ default: 18789, minimum: 0, maximum: 65535 }),
        auth: Type.Object({ token: Type.Optional(Secret('token of the read API')) }, { ...strict, default: {} }),
        trustProxy: Type.Boolean({ default: false, description: 'take the client address from X-Forwarded-For' }),
        shutdownTimeoutSeconds: Type.Number({ default: 10, minimum: 0 }),
      },
      { ...strict, default: {} },
    ),
    hooks: Type.Object(
      {
        enabled: Type.Boolean({ default: false }),
        token: Type.Optional(Secret('hook token')),
        path: Type.String({ default: '/hooks' }),
        maxBodyBytes: Type.Integer({ default: 262144, minimum: 1, maximum: 64 * 1024 * 1024 }),
        bodyTimeoutMs: Type.Integer({ default: 30000, minimum: 1 }),
        allowQueryToken: Type.Boolean({ default: true }),
        agentStatus: Type.Union([Type.Literal(200), Type.Literal(202)], { default: 202 }),
        allowRequestSessionKey: Type.Boolean({ default: true }),
        allowedAgentIds: Type.Optional(
          Type.Array(Type.String({ minLength: 1 }), {
            description: 'the agents a request or mapping may name (agentId): absent or ["*"] any, [] none (docs/agents.md)',
          }),
        ),
        replyInResponse: Type.Boolean({
          default: false,
          description:
            "a run's reply text may go back to the sender: in a callback's event (docs/callbacks.md) and a waiting request's answer (docs/waiting.md)",
        }),
        waitForCompletionSeconds: Type.Integer({
          default: 120,
          minimum: 1,
          maximum: 3600,
          description:
            'how long a /hooks/agent request with waitForCompletion waits for its run before it is answered 202 (docs/waiting.md)',
        }),
        allowedSessionKeyPrefixes: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
        idempotencyTtlSeconds: Type.Integer({ default: 86400, minimum: 1 }),
        authFailures: Type.Object(
          {
            max: Type.Integer({ default: 20, minimum: 1 }),
            windowSeconds: Type.Integer({ default: 60, minimum: 1 }),
          },
          { ...strict, default: {} },
        ),
        maxQueuedRuns: Type.Integer({ default: 10000, minimum: 1 }),
        transformWorkers: Type.Integer({
          default: 4,
          minimum: 1,
          maximum: 32,
          description: 'most transform workers; the pool grows from one only when calls wait',
        }),
        reloadDebounceMs: Type.Integer({ default: 50, minimum: 0, maximum: 10000 }),
        presets: Type.Array(Type.Union([Type.String({ minLength: 1 }), PresetEntry]), { default: [] }),
        mappings: Type.Array(Mapping, { default: [] }),
        transformsDir: Type.Optional(Type.String({ minLength: 1 })),
        gmail: Type.Optional(Gmail),
      },
      { ...strict, default: {} },
    ),
    agents: Type.Object(
      {
        defaults: Type.Object(
          {
            model: Type.String({ default: 'echo/echo', minLength: 3 }),
            models: Type.Optional(Type.Array(Type.String({ minLength: 3 }), { minItems: 1 })),
            timeoutSeconds: Type.Number({ default: 600, exclusiveMinimum: 0, maximum: 86400 }),
            thinking: Type.Optional(Thinking),
            maxConcurrent: Type.Integer({ default: 4, minimum: 1, maximum: 256 }),
            heartbeat: Type.Object(
              {
                every: Type.String({ default: '30m', pattern: '^(0|[0-9]+(ms|s|m|h))$' }),
                prompt: Type.Optional(Type.String({ minLength: 1 })),
                maxEvents: Type.Integer({
                  default: 200,
                  minimum: 1,
                  maximum: 10000,
                  description: 'pending events a heartbeat shows; older ones are counted by source and consumed with them',
                }),
              },
              { ...strict, default: {} },
            ),
          },
          { ...strict, default: {} },
        ),
        list: Type.Optional(Type.Array(AgentEntry, { minItems: 1, description: 'the agents hooks may run (docs/agents.md)' })),
        // additionalProperties: false makes the id pattern binding (a record alone only validates matching keys)
        providers: Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]*$' }), PluginSlice(true), {
          default: { echo: { type: 'echo' } },
          additionalProperties: false,
        }),
      },
      { ...strict, default: {} },
    ),
    channels: Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]*$' }), PluginSlice(false), {
      default: { console: {} },
      additionalProperties: false,
    }),
    services: Type.Record(Type.String({ pattern: '^[a-z0-9][a-z0-9_-]*$' }), PluginSlice(false), {
      default: {},
      additionalProperties: false,
    }),
    session: Type.Object({ defaultRoute: Type.Optional(Route) }, { ...strict, default: {} }),
    callbacks: Type.Array(Callback, { default: [] }),
    delivery: Type.Object(
      {
        initialBackoffMs: Type.Integer({
          default: 1000,
          minimum: 1,
          maximum: 3_600_000,
          description: 'delay before the 2nd attempt; doubles per failure',
        }),
        maxBackoffMs: Type.Integer({
          default: 300_000,
          minimum: 1,
          maximum: 86_400_000,
          description: 'longest computed delay between attempts',
        }),
      },
      { ...strict, default: {} },
    ),
    plugins: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
    storage: StorageSchema,
    retention: Type.Object(
      {
        runsDays: Type.Number({
          default: 30,
          exclusiveMinimum: 0,
          description: 'finished runs, delivered outbox rows and transcripts of sessions idle this long are pruned (fractions allowed)',
        }),
        eventsDays: Type.Number({
          default: 30,
          exclusiveMinimum: 0,
          description: 'consumed events are pruned this long after they were consumed',
        }),
        requestsDays: Type.Number({
          default: 7,
          minimum: 0,
          description: 'accepted hook requests are kept this long for the request log; 0 keeps none',
        }),
        pruneEverySeconds: Type.Integer({ default: 60, minimum: 1, maximum: 86_400, description: 'how often the background pruning runs' }),
      },
      { ...strict, default: {} },
    ),
    logging: Type.Object(
      {
        level: Type.Union(
          ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
          {
            default: 'info',
          },
        ),
      },
      { ...strict, default: {} },
    ),
  },
  strict,
);

export type Config = Static<typeof ConfigSchema>;
export type MappingConfig = Static<typeof Mapping>;
export type CallbackConfig = Static<typeof Callback>;
export type CallbackType = (typeof CALLBACK_TYPES)[number];
export type MatchConfig = Static<typeof Match>;
export type RuleConfig = Static<typeof Rule>;
export type ThinkingLevel = Static<typeof Thinking>;
export type WakeModeValue = Static<typeof WakeMode>;
export const thinkingLevels: readonly string[] = ThinkingLevels;

function schemaAt(schema: TSchema, path: readonly string[]): TSchema | undefined {
  let node: TSchema | undefined = schema;
  for (const seg of path) {
    if (!node) return undefined;
    if (node.type === 'object' && node.properties && seg in node.properties) node = node.properties[seg];
    else if (node.type === 'array' && /^\d+$/.test(seg)) node = node.items as TSchema;
    else if (node.type === 'object' && node.patternProperties) node = Object.values(node.patternProperties)[0] as TSchema;
    else return undefined;
  }
  return node;
}

/** Property names the schema allows under a given key path, for "did you mean" hints. */
export function knownKeys(schema: TSchema, path: readonly string[]): string[] {
  const node = schemaAt(schema, path);
  if (node?.type !== 'object') return [];
  // an object with a form per kind (`storage`): the keys of every form
  const forms: TSchema[] = [node, ...((node.oneOf as TSchema[] | undefined) ?? [])];
  return [...new Set(forms.flatMap((f) => (f.properties ? Object.keys(f.properties) : [])))];
}

/** The pattern keys must match under a given key path (records of ids), if any. */
export function keyPattern(schema: TSchema, path: readonly string[]): string | undefined {
  const node = schemaAt(schema, path);
  return node?.type === 'object' && node.patternProperties ? Object.keys(node.patternProperties)[0] : undefined;
}
