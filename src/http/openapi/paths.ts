/**
 * Every endpoint of the service, for the OpenAPI document: one entry per method and path. An endpoint
 * added elsewhere adds its entry here (or pushes one onto `operations`); document.ts turns the list into
 * OpenAPI 3.1. Schemas are TypeBox: a schema with an `$id` is shown by reference to `components/schemas`
 * (list it in schemas.ts `namedSchemas`). `{hooks}` in a path stands for `hooks.path`.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { AgentBody, WakeBody } from '../../intake/actions.ts';
import * as S from './schemas.ts';
import * as U from '../ui-schemas.ts';

/** `gateway`: the gateway token, or a console session's cookie (with its CSRF token on a POST); `session`: the cookie only. */
export type Auth = 'hook' | 'gateway' | 'session' | 'none';

export interface Param {
  name: string;
  in: 'path' | 'query';
  schema: TSchema;
  description?: string;
  required?: boolean;
}

export interface Operation {
  method: 'get' | 'post' | 'delete';
  path: string;
  summary: string;
  /** `hooks`, `read`, `admin` or `health` (document.ts describes these); another name is listed as it is. */
  tag: string;
  auth: Auth;
  params?: Param[];
  /** JSON request body. */
  body?: TSchema;
  /** Answers by status; `text` for a non-JSON answer's media type (or types), `null` for no body. */
  responses: Record<string, { description: string; schema?: TSchema; text?: string | string[] } | null>;
}

const limit: Param = {
  name: 'limit',
  in: 'query',
  schema: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
  description: 'newest first, at most this many',
};
const id = (what: string): Param => ({
  name: 'id',
  in: 'path',
  schema: Type.String({ minLength: 1 }),
  description: `the ${what}'s id`,
  required: true,
});
const list = (key: string, item: TSchema, head: Record<string, TSchema> = {}) =>
  Type.Object({ ok: Type.Literal(true), ...head, [key]: Type.Array(item) });
const one = (key: string, item: TSchema) => Type.Object({ ok: Type.Literal(true), [key]: item });
const ok = (description: string, schema: TSchema) => ({ description, schema });

/** The answers every hook endpoint shares besides its success. */
const hookErrors = {
  '400': ok('invalid body or field', S.ErrorBody),
  '401': ok('missing or invalid token or signature', S.ErrorBody),
  '413': ok('body too large', S.ErrorBody),
  '415': ok('unsupported media type', S.ErrorBody),
  '429': ok("too many failed authentications, or the mapping's rate limit", S.ErrorBody),
  '503': ok('the queue is full or storage is unavailable; nothing was stored', S.ErrorBody),
};
const gatewayErrors = {
  '401': ok('missing or invalid gateway token', S.ErrorBody),
  '429': ok('too many failed authentications', S.ErrorBody),
};
/** A call that changes state with a console session's cookie but without its CSRF token, or from another site. */
const csrf = { '403': ok("a console session's call without its X-CSRF-Token, or from another site (CSRF_REFUSED)", S.ErrorBody) };

export const operations: Operation[] = [
  {
    method: 'post',
    path: '{hooks}/wake',
    summary: 'Queue a system event for the main session',
    tag: 'hooks',
    auth: 'hook',
    body: WakeBody,
    responses: { '200': ok('stored', S.WakeAnswer), ...hookErrors },
  },
  {
    method: 'post',
    path: '{hooks}/agent',
    summary: 'Queue an agent run',
    tag: 'hooks',
    auth: 'hook',
    body: AgentBody,
    responses: { '200': ok('stored (hooks.agentStatus 200)', S.AgentAnswer), '202': ok('stored', S.AgentAnswer), ...hookErrors },
  },
  {
    method: 'post',
    path: '{hooks}/{name}',
    summary: 'A named hook: the first mapping whose match takes it turns it into actions',
    tag: 'hooks',
    auth: 'hook',
    params: [{ name: 'name', in: 'path', schema: Type.String({ minLength: 1 }), required: true }],
    body: Type.Unknown({ description: "any JSON, or a form; a mapping with `verify` takes its provider's signature instead of the token" }),
    responses: {
      '200': ok("stored (one action), or a verifier's handshake answer", Type.Union([Type.Ref(S.HookAnswer), Type.Object({})])),
      '202': ok('stored', Type.Ref(S.HookAnswer)),
      '204': null,
      '404': ok('no mapping takes it', S.ErrorBody),
      ...hookErrors,
      '500': ok("the mapping's transform failed", S.ErrorBody),
    },
  },
  {
    method: 'get',
    path: '/healthz',
    summary: 'Liveness',
    tag: 'health',
    auth: 'none',
    responses: { '200': ok('alive', Type.Object({ ok: Type.Literal(true) })) },
  },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness',
    tag: 'health',
    auth: 'none',
    responses: { '200': ok('ready', Type.Object({ ok: Type.Literal(true) })), '503': ok('not ready', S.ErrorBody) },
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics',
    tag: 'health',
    auth: 'gateway',
    responses: { '200': { description: 'Prometheus text', text: 'text/plain' }, ...gatewayErrors },
  },
  {
    method: 'get',
    path: '/api/openapi.json',
    summary: 'This document',
    tag: 'read',
    auth: 'none',
    responses: { '200': ok('OpenAPI 3.1', Type.Object({ openapi: Type.String() })) },
  },
  {
    method: 'get',
    path: '/api/status',
    summary: 'Generation, last reload error, counts',
    tag: 'read',
    auth: 'gateway',
    responses: { '200': ok('status', S.Status), ...gatewayErrors },
  },
  {
    method: 'get',
    path: '/api/runs',
    summary: 'Runs, newest first',
    tag: 'read',
    auth: 'gateway',
    params: [
      limit,
      { name: 'status', in: 'query', schema: Type.Union(['queued', 'running', 'ok', 'error', 'timeout'].map((s) => Type.Literal(s))) },
      {
        name: 'hook',
        in: 'query',
        schema: Type.String({ minLength: 1, maxLength: 512 }),
        description: 'only runs whose hook name holds this, in any case (`heartbeat` for heartbeats)',
      },
      {
        name: 'session',
        in: 'query',
        schema: Type.String({ minLength: 1, maxLength: 512 }),
        description: 'only runs whose session key holds this',
      },
    ],
    responses: {
      '200': ok('runs', list('runs', Type.Ref(S.Run))),
      '400': ok('bad limit, status or filter', S.ErrorBody),
      ...gatewayErrors,
    },
  },
  {
    method: 'get',
    path: '/api/runs/{id}',
    summary: 'One run',
    tag: 'read',
    auth: 'gateway',
    params: [id('run')],
    responses: {
      '200': ok(
        'the run, and the lifecycle events sent to callbacks for it',
        Type.Object({ ok: Type.Literal(true), run: Type.Ref(S.Run), callbacks: Type.Array(Type.Ref(S.RunCallback)) }),
      ),
      '404': ok('no such run', S.ErrorBody),
      ...gatewayErrors,
    },
  },
  {
    method: 'get',
    path: '/api/sessions/{key}/messages',
    summary: "A session's transcript, newest first",
    tag: 'read',
    auth: 'gateway',
    params: [
      { name: 'key', in: 'path', schema: Type.String({ minLength: 1 }), description: 'the session key, percent-encoded', required: true },
      limit,
    ],
    responses: {
      '200': ok('messages', list('messages', Type.Ref(S.SessionMessage), { sessionKey: Type.String() })),
      '400': ok('bad limit', S.ErrorBody),
      ...gatewayErrors,
    },
  },
  {
    method: 'get',
    path: '/api/main/events',
    summary: 'System events of the main session, newest first',
    tag: 'read',
    auth: 'gateway',
    params: [limit, { name: 'status', in: 'query', schema: Type.Union([Type.Literal('pending'), Type.Literal('consumed')]) }],
    responses: {
      '200': ok('events', list('events', Type.Ref(S.SystemEvent))),
      '400': ok('bad limit or status', S.ErrorBody),
      ...gatewayErrors,
    },
  },
  {
    method: 'get',
    path: '/api/requests',
    summary: 'Kept hook requests, newest first',
    tag: 'read',
    auth: 'gateway',
    params: [
      limit,
      { name: 'hook', in: 'query', schema: Type.String(), description: 'only this hook name' },
      {
        name: 'status',
        in: 'query',
        schema: Type.Integer({ minimum: 100, maximum: 599 }),
        description: 'only requests answered with this status',
      },
      { name: 'before', in: 'query', schema: Type.String(), description: 'the next page: requests older than this kept request' },
    ],
    responses: {
      '200': ok('requests, without bodies', list('requests', Type.Ref(S.KeptRequestSummary))),
      '400': ok('bad filter', S.ErrorBody),
      ...gatewayErrors,
    },
  },
  {
    method: 'get',
    path: '/api/requests/{id}',
    summary: 'One kept request: headers, body, mapping, actions, runs and events',
    tag: 'read',
    auth: 'gateway',
    params: [id('kept request')],
    responses: {
      '200': ok('the request', one('request', Type.Ref(S.KeptRequest))),
      '404': ok('not kept (unknown, or pruned)', S.ErrorBody),
      ...gatewayErrors,
    },
  },
  {
    method: 'post',
    path: '/api/requests/{id}/replay',
    summary: 'Run a kept request again through the current configuration',
    tag: 'admin',
    auth: 'gateway',
    params: [id('kept request')],
    responses: {
      '200': ok(
        'stored, or skipped by its mapping',
        Type.Intersect([Type.Ref(S.ReplayAnswer), Type.Object({}, { additionalProperties: true })]),
      ),
      '202': ok('stored', Type.Ref(S.ReplayAnswer)),
      '400': ok('the body no longer passes validation', S.ErrorBody),
      '404': ok('no such kept request, or no mapping takes it now', S.ErrorBody),
      '409': ok('a refused request whose body was not kept (its credential had not passed)', S.ErrorBody),
      ...csrf,
      ...gatewayErrors,
      '500': ok("the mapping's transform failed", S.ErrorBody),
      '503': ok('the queue is full or storage is unavailable', S.ErrorBody),
    },
  },
  {
    method: 'post',
    path: '/api/runs/{id}/retry',
    summary: 'A new run with the same input as a finished one',
    tag: 'admin',
    auth: 'gateway',
    params: [id('run')],
    responses: {
      '202': ok('the new run is queued', S.RetryAnswer),
      '404': ok('no such run', S.ErrorBody),
      '409': ok('the run is not finished, or is a heartbeat', S.ErrorBody),
      ...csrf,
      ...gatewayErrors,
      '503': ok('the queue is full', S.ErrorBody),
    },
  },
  {
    method: 'post',
    path: '/api/runs/{id}/redeliver',
    summary: 'Send a failed or skipped reply again through the outbox',
    tag: 'admin',
    auth: 'gateway',
    params: [id('run')],
    responses: {
      '202': ok('a new delivery is queued', S.RedeliverAnswer),
      '404': ok('no such run', S.ErrorBody),
      '409': ok('nothing to send again: no reply, or its delivery is pending or sent, or it has no route', S.ErrorBody),
      ...csrf,
      ...gatewayErrors,
    },
  },
  {
    method: 'get',
    path: '/api/stats',
    summary: "The console's overview: hook answers per minute by status, the run queue, the outbox, the configuration",
    tag: 'console',
    auth: 'gateway',
    responses: { '200': ok('the figures', U.StatsAnswer), ...gatewayErrors },
  },
  {
    method: 'get',
    path: '/api/mappings',
    summary: "The serving configuration's mappings, for the tester",
    tag: 'console',
    auth: 'gateway',
    responses: { '200': ok('the mappings in order', U.MappingsAnswer), ...gatewayErrors },
  },
  {
    method: 'post',
    path: '/api/try',
    summary: 'A dry run of a hook request, as hook-intake try: nothing is dispatched, stored or logged',
    tag: 'console',
    auth: 'gateway',
    body: U.TryRequest,
    responses: {
      '200': ok('what the request would do, or the error it would get', U.TryAnswer),
      '400': ok('a malformed try request', S.ErrorBody),
      ...csrf,
      ...gatewayErrors,
    },
  },
  {
    method: 'get',
    path: '/api/stream',
    summary: "Server-sent events: the overview's figures (event: stats) at once and whenever they change",
    tag: 'console',
    auth: 'gateway',
    responses: {
      '200': { description: 'an event stream', text: 'text/event-stream' },
      ...gatewayErrors,
      '503': ok('too many streams are open, or the service is stopping', S.ErrorBody),
    },
  },
  {
    method: 'get',
    path: '/ui',
    summary: 'The console',
    tag: 'console',
    auth: 'none',
    responses: { '200': { description: "the console's page", text: 'text/html' } },
  },
  {
    method: 'get',
    path: '/ui/{file}',
    summary: "The console's scripts and stylesheet",
    tag: 'console',
    auth: 'none',
    params: [
      {
        name: 'file',
        in: 'path',
        schema: Type.String({ minLength: 1 }),
        description: 'a file of the ui/ folder, e.g. js/app.js',
        required: true,
      },
    ],
    responses: { '200': { description: 'the file', text: ['text/javascript', 'text/css'] }, '404': ok('no such file', S.ErrorBody) },
  },
  {
    method: 'post',
    path: '/ui/session',
    summary: 'Sign in: the gateway token (Authorization: Bearer) for a session cookie and its CSRF token',
    tag: 'console',
    auth: 'gateway',
    responses: { '200': ok('signed in; the cookie is in Set-Cookie', U.SessionAnswer), ...gatewayErrors },
  },
  {
    method: 'get',
    path: '/ui/session',
    summary: "The session's CSRF token, while the cookie holds a session",
    tag: 'console',
    auth: 'session',
    responses: {
      '200': ok('the session holds', U.SessionAnswer),
      '400': ok('called with the token, not a session', S.ErrorBody),
      ...gatewayErrors,
    },
  },
  {
    method: 'delete',
    path: '/ui/session',
    summary: 'Sign out: the session ends and the cookie is cleared',
    tag: 'console',
    auth: 'session',
    responses: { '204': null, ...csrf, ...gatewayErrors },
  },
];
