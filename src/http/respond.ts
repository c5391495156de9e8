/**
 * What every answer and every request log line is made of, shared by the
 * `/hooks` listener (plain node:http, the hot path) and the Koa app (read API,
 * health, everything else): the one JSON error shape, the gentle close when a
 * request body is left unread, and the one log line per request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { errors, HookError, isHookError } from '../errors.ts';
import { StorageTimeoutError, StorageUnavailableError } from '../store/errors.ts';
import { lingerAfterAnswer } from './connection.ts';
import type { RequestState } from './state.ts';

export const JSON_TYPE = 'application/json; charset=utf-8';
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** The JSON body of an error; 5xx internals never reach the client. */
export function errorBody(e: HookError): Record<string, unknown> {
  const error = e.expose ? e.message : 'internal error';
  return e.field !== undefined && e.field !== '' ? { ok: false, error, code: e.code, field: e.field } : { ok: false, error, code: e.code };
}

/** Errors not raised by this service get a generic answer: a storage failure 503, Koa's own their status, bugs 500. */
export function toHookError(err: unknown): HookError {
  if (isHookError(err)) return err;
  if (err instanceof StorageUnavailableError)
    return errors.storageUnavailable(err, err.retryAfterSeconds, err instanceof StorageTimeoutError);
  const status = (err as { status?: unknown })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = status === 404 ? 'NOT_FOUND' : status === 405 ? 'METHOD_NOT_ALLOWED' : 'BAD_REQUEST';
    return new HookError(status, code, (err as Error).message || 'bad request');
  }
  return new HookError(500, 'INTERNAL', 'internal error', { cause: err });
}

function hasBody(h: IncomingMessage['headers']): boolean {
  return (h['content-length'] !== undefined && h['content-length'] !== '0') || h['transfer-encoding'] !== undefined;
}

/**
 * True when the answer leaves request bytes unread: the connection is then
 * closed after the answer, gently enough for the client to read it.
 */
export function closeIfBodyUnread(req: IncomingMessage): boolean {
  if (req.readableEnded || !hasBody(req.headers)) return false;
  lingerAfterAnswer(req);
  return true;
}

/** Writes a JSON answer (or an empty 204) in one go. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> | undefined): void {
  if (status === 204) {
    res.writeHead(204, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  const h: Record<string, string | number> = { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) };
  if (headers) for (const k of Object.keys(headers)) h[k] = headers[k]!;
  res.writeHead(status, h);
  res.end(text);
}

export type RequestLogger = (method: string, path: string, status: number, start: number, state: RequestState) => void;

/**
 * The request line. Its fields are fixed and never hold a secret (the path is
 * logged without its query string), so it skips the logger's wildcard
 * redaction, which costs more than the rest of the line.
 */
export function requestLogger(logger: Logger): RequestLogger {
  const log = logger.child({}, { redact: [] });
  return (method, path, status, start, s) => {
    const quiet = QUIET_PATHS.has(path);
    if (!log.isLevelEnabled(quiet ? 'debug' : 'info')) return;
    const ms = Math.round((performance.now() - start) * 100) / 100;
    const line = { method, path, status, ms, hook: s.hook, mapping: s.mapping, bytes: s.bytes, runId: s.runId, eventId: s.eventId };
    if (quiet) log.debug(line, 'request');
    else log.info(line, 'request');
  };
}

/** At most one `storage unavailable` line this often: under load every request would write one. */
export const STORAGE_LOG_EVERY_MS = 10_000;
/** When each logger last wrote that line (one service's outage does not quiet another's in the same process). */
const storageLoggedAt = new WeakMap<Logger, number>();

/**
 * Logs an unexpected failure once; the expected 5xx (transform failed, queue full) were logged where
 * they happened. A storage failure is logged with its cause, once per `STORAGE_LOG_EVERY_MS`.
 */
export function logFailure(logger: Logger, e: HookError, path: string, s: RequestState): void {
  if (e.code === 'STORAGE_UNAVAILABLE') {
    const now = performance.now();
    if (now - (storageLoggedAt.get(logger) ?? -Infinity) < STORAGE_LOG_EVERY_MS) return;
    storageLoggedAt.set(logger, now);
    logger.error({ err: e.cause, code: e.code, path }, 'storage unavailable: requests are answered 503 until it can write again');
    return;
  }
  if (e.status >= 500 && !e.expose)
    logger.error({ err: e.cause ?? e, code: e.code, path, hook: s.hook, mapping: s.mapping }, 'request failed');
}
