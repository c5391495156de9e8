/**
 * The one error type of the service. Everything that ends a request early
 * throws a `HookError`; the error middleware turns it into the JSON body
 * `{ok:false, error, code}` (plus `field` when a request field is at fault).
 *
 * `expose` is false for 5xx unless the message is a fixed sentence written for
 * clients: internals go to the log, never to the client.
 */
export class HookError extends Error {
  readonly status: number;
  readonly code: string;
  readonly expose: boolean;
  readonly field: string | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    opts: { field?: string; headers?: Record<string, string>; cause?: unknown; expose?: boolean } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'HookError';
    this.status = status;
    this.code = code;
    this.expose = opts.expose ?? status < 500;
    this.field = opts.field;
    this.headers = opts.headers;
  }
}

export function isHookError(err: unknown): err is HookError {
  return err instanceof HookError;
}

/** The catalog of stable codes. Messages here are what clients see. */
export const errors = {
  notFound: () => new HookError(404, 'NOT_FOUND', 'not found'),
  methodNotAllowed: (allow = 'POST') =>
    new HookError(405, 'METHOD_NOT_ALLOWED', `method not allowed; use ${allow}`, { headers: { Allow: allow } }),
  unauthorized: () => new HookError(401, 'UNAUTHORIZED', 'missing or invalid token'),
  queryTokenRefused: () =>
    new HookError(401, 'UNAUTHORIZED', 'the ?token= query parameter is disabled; send Authorization: Bearer <token>'),
  rateLimited: (retryAfterSeconds: number, what = 'too many failed authentication attempts') =>
    new HookError(429, 'RATE_LIMITED', `${what}; retry after ${retryAfterSeconds}s`, {
      headers: { 'Retry-After': String(retryAfterSeconds) },
    }),
  payloadTooLarge: (limit: number) =>
    new HookError(413, 'PAYLOAD_TOO_LARGE', `request body exceeds ${limit} bytes`, { headers: { Connection: 'close' } }),
  requestTimeout: (ms: number) =>
    new HookError(408, 'REQUEST_TIMEOUT', `request body not received within ${ms} ms`, { headers: { Connection: 'close' } }),
  unsupportedMediaType: (detail: string) => new HookError(415, 'UNSUPPORTED_MEDIA_TYPE', detail),
  /** Refusals below the app: what the HTTP parser or server could not take. */
  badRequest: (detail: string) => new HookError(400, 'BAD_REQUEST', detail, { headers: { Connection: 'close' } }),
  headersTooLarge: () => new HookError(431, 'HEADERS_TOO_LARGE', 'request headers too large', { headers: { Connection: 'close' } }),
  expectationFailed: () =>
    new HookError(417, 'EXPECTATION_FAILED', 'the only expectation supported is 100-continue', { headers: { Connection: 'close' } }),
  invalidJson: (detail: string) => new HookError(400, 'INVALID_JSON', `invalid JSON body: ${detail}`),
  invalidPayload: (field: string, reason: string) =>
    new HookError(400, 'INVALID_PAYLOAD', field ? `${field}: ${reason}` : reason, { field }),
  // messages name the field, never its value: answers show up in senders' delivery logs
  modelNotAllowed: (agent?: string) =>
    new HookError(
      400,
      'MODEL_NOT_ALLOWED',
      agent ? `model: is not one of the models of agent "${agent}"` : 'model: is not one of agents.defaults.models',
      {
        field: 'model',
      },
    ),
  hookNotFound: (name: string) => new HookError(404, 'HOOK_NOT_FOUND', `no hook mapping matches "${name}"`),
  signedButUnmatched: (name: string, mapping: string) =>
    new HookError(
      404,
      'HOOK_NOT_FOUND',
      `the signature is valid for mapping "${mapping}", but no mapping's match accepts this request to "${name}"`,
    ),
  // the cause (the transform's error) is for `hook-intake try` and the log, never the answer
  transformFailed: (cause?: unknown) => new HookError(500, 'TRANSFORM_FAILED', 'the hook transform failed', { expose: true, cause }),
  invalidSignature: () => new HookError(401, 'INVALID_SIGNATURE', 'missing or invalid signature'),
  /** A console call that changes state without its session's CSRF token, or from another site. */
  csrfRefused: () =>
    new HookError(
      403,
      'CSRF_REFUSED',
      "a console call that changes state needs its session's X-CSRF-Token header and must come from the console's own page",
    ),
  /** A provider's `GET` handshake whose verify token does not match. */
  forbidden: () => new HookError(403, 'FORBIDDEN', 'handshake refused'),
  /** An admin action the record's state does not allow (retry a run still queued, redeliver a reply already sent). */
  conflict: (reason: string) => new HookError(409, 'CONFLICT', reason),
  unavailable: (reason: string, retryAfterSeconds?: number) =>
    new HookError(503, 'UNAVAILABLE', reason, {
      expose: true,
      ...(retryAfterSeconds ? { headers: { 'Retry-After': String(retryAfterSeconds) } } : {}),
    }),
  /**
   * The store cannot write (a full disk, an I/O error): nothing was stored; the sender should retry. When it did not
   * answer in time (`late`), a write sent to a server may still land: the retry's idempotency key finds it.
   */
  storageUnavailable: (cause: unknown, retryAfterSeconds: number, late = false) =>
    new HookError(
      503,
      'STORAGE_UNAVAILABLE',
      late
        ? 'storage did not answer in time; try again later with the same idempotency key'
        : 'storage is unavailable; nothing was stored; try again later',
      {
        expose: true,
        cause,
        headers: { 'Retry-After': String(retryAfterSeconds) },
      },
    ),
  /** A request that arrived on a kept-alive connection after shutdown began: not taken as new work. */
  shuttingDown: () =>
    new HookError(503, 'SHUTTING_DOWN', 'the service is shutting down', { expose: true, headers: { Connection: 'close' } }),
  /** A request waiting for its run when the service stops (docs/waiting.md): the run is stored, and a repeat of the key waits for it again. */
  stoppedWaiting: (runId: string) =>
    new HookError(
      503,
      'SHUTTING_DOWN',
      `the service is shutting down; run ${runId} is stored; send the request again with its idempotency key to wait for it`,
      {
        expose: true,
        headers: { 'Retry-After': '5', Connection: 'close' },
      },
    ),
  internal: (cause?: unknown) => new HookError(500, 'INTERNAL', 'internal error', { cause }),
} as const;

/** A configuration problem: the file, the key path and the reason. */
export class ConfigError extends Error {
  readonly issues: ConfigIssue[];
  constructor(issues: ConfigIssue[]) {
    super(issues.map(formatIssue).join('\n'));
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

export interface ConfigIssue {
  /** The file the problem is in (config file, transform module, plugin). */
  file: string;
  /** Dotted key path, e.g. `hooks.mappings[0].match.path`; empty for the whole file. */
  path: string;
  message: string;
  /** 1-based line in `file`, when it is known. */
  line?: number;
}

export function formatIssue(i: ConfigIssue): string {
  const where = i.line ? `${i.file}:${i.line}` : i.file;
  return i.path ? `${where}: ${i.path}: ${i.message}` : `${where}: ${i.message}`;
}
