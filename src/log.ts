/**
 * Structured JSON logs (pino). Tokens, signatures and payloads are never
 * passed to the logger; the redaction list is a second line of defence for
 * header objects that might be logged by mistake.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import { onNextTurn } from './util/next-turn.ts';

export type { Logger };

// Provider signature and token headers (the built-in verifiers', docs/verifiers.md):
// a signature is no secret, but a valid one lets anyone replay its request while the
// timestamp window lasts, so they are kept out of logs like tokens.
const SIGNATURE_HEADERS = [
  'x-hub-signature-256',
  'x-hub-signature',
  'stripe-signature',
  'x-slack-signature',
  'webhook-signature',
  'svix-signature',
  'x-signature',
  'x-gitlab-token',
  'x-shopify-hmac-sha256',
  'x-twilio-signature',
  'x-twilio-email-event-webhook-signature',
  'linear-signature',
  'sentry-hook-signature',
  'x-pagerduty-signature',
  'x-hubspot-signature-v3',
  'x-zm-signature',
  'typeform-signature',
  'calendly-webhook-signature',
  'paddle-signature',
];

export const REDACT_PATHS = [
  'headers.authorization',
  'headers["x-gateway-token"]',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers["x-gateway-token"]',
  ...SIGNATURE_HEADERS.flatMap((h) => [`headers["${h}"]`, `*.headers["${h}"]`]),
  'token',
  '*.token',
  'secret',
  '*.secret',
];

let lastMs = NaN;
let lastTime = '';

/**
 * pino's ISO time field (`pino.stdTimeFunctions.isoTime`), made once per millisecond: under load
 * many lines share one, and formatting a date for each line was a visible share of the main thread
 * (measured: docs/performance.md, "Logging and standard output").
 */
export function isoTime(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastTime = `,"time":"${new Date(now).toISOString()}"`;
  }
  return lastTime;
}

/**
 * Standard output by default, written asynchronously (see `stdoutDestination`).
 * pino flushes what is pending when the process exits (including after
 * SIGTERM). JSON lines, or `prettyLine`'s for a terminal.
 */
export function createLogger(level: string, dest?: DestinationStream, format: LogFormat = 'json'): Logger {
  const out = dest ?? stdoutDestination();
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    format === 'pretty' ? prettyDestination(out) : out,
  );
}

export type LogFormat = 'json' | 'pretty';

/** The `--log-format` of `serve`: as given, else pretty for a person at a terminal, JSON for a supervisor or a pipe. */
export function logFormat(flag: string | undefined, isTTY: boolean): LogFormat {
  if (flag === undefined) return isTTY ? 'pretty' : 'json';
  if (flag === 'json' || flag === 'pretty') return flag;
  throw new Error(`--log-format must be json or pretty, not "${flag}"`);
}

/** Turns each JSON log line into a readable one (`prettyLine`) on its way to `target`. */
export function prettyDestination(
  target: DestinationStream & { flush?(cb?: (err?: Error) => void): void; flushSync?(): void },
): DestinationStream {
  return {
    write: (line: string) => target.write(prettyLine(line)),
    flush: (cb?: (err?: Error) => void) => (target.flush ? target.flush(cb) : cb?.()),
    flushSync: () => target.flushSync?.(),
  } as DestinationStream;
}

const SHOWN_APART = new Set(['level', 'time', 'pid', 'msg', 'component', 'stack', 'err']);

/**
 * One JSON log line as a person reads it: local time, level, `[component]`, message, then
 * `key=value` for the other fields; a stack (`stack`, `err.stack`) follows on indented lines.
 * `08:35:36.826 INFO  request method=POST path=/hooks/wake status=200 ms=3.25 hook=wake`
 */
export function prettyLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof o.time === 'string' ? localTime(new Date(o.time)) : '';
  const head = [
    time,
    String(o.level ?? '')
      .toUpperCase()
      .padEnd(5),
  ];
  if (o.component !== undefined) head.push(`[${String(o.component)}]`);
  head.push(String(o.msg ?? ''));
  const fields = Object.entries(o)
    .filter(([k, v]) => !SHOWN_APART.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${fieldText(v)}`);
  const err = o.err as { message?: unknown; stack?: unknown } | undefined;
  if (err !== undefined) fields.push(`err=${fieldText(typeof err === 'object' && err && 'message' in err ? err.message : err)}`);
  const stack = typeof o.stack === 'string' ? o.stack : typeof err?.stack === 'string' ? err.stack : undefined;
  const tail = stack
    ? stack
        .split('\n')
        .map((l) => `\n    ${l.trim().startsWith('at ') ? '    ' : ''}${l.trim()}`)
        .join('')
    : '';
  return `${[...head, ...fields].join(' ')}${tail}\n`;
}

function localTime(d: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** A field's value: bare when it reads unambiguously, else as JSON. */
function fieldText(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

/**
 * The largest write to standard output. Everything this process prints there goes through one
 * writer (`stdoutDestination`: the logger, `printStdout`), so no write can interleave with another
 * of its own whatever its size. The size is what lets the writer keep up: one write is in flight at
 * a time and its completion is handled once per turn of a busy event loop, so with small writes the
 * lines of a saturated server piled up in memory, written out long after the load stopped
 * (measured: docs/performance.md, "Logging and standard output").
 */
export const MAX_WRITE = 64 * 1024;

interface StdoutWriter extends DestinationStream {
  flush(cb?: (err?: Error) => void): void;
  flushSync(): void;
}

let stdout: StdoutWriter | undefined;

/**
 * The process's one standard-output writer. Lines written during one turn of
 * the event loop are joined into writes of at most `MAX_WRITE` that end at a
 * line end and handed to an asynchronous sonic-boom, which batches further
 * while a write is in flight and handles partial writes, EAGAIN, a closed pipe
 * and the flush at exit. Handing it one line at a time cost more per line (it
 * re-measures its pending chunk on every write; measured: docs/performance.md,
 * "Logging and standard output").
 */
function stdoutDestination(): StdoutWriter {
  if (stdout) return stdout;
  // registered before sonic-boom's own exit hook, so the lines of the last turn reach it before it flushes
  const lines = batchLines({ write: (chunk) => void boom.write(chunk) });
  process.once('exit', () => lines.flush());
  const boom = pino.destination({ dest: 1, sync: false, maxWrite: MAX_WRITE });
  const dest: StdoutWriter = {
    write: (line: string) => lines.write(line),
    flush(cb) {
      lines.flush();
      boom.flush(cb);
    },
    flushSync() {
      lines.flush();
      boom.flushSync();
    },
  };
  stdout = dest;
  return dest;
}

/**
 * Prints to standard output through the logger's writer (see `MAX_WRITE`), so
 * it never lands inside a log line: written with the log lines of this turn of
 * the event loop, after them, and at exit at the latest (SIGTERM included; a
 * process killed outright loses what was not written yet, as with its logs).
 * `text` should end with a newline.
 */
export function printStdout(text: string): void {
  stdoutDestination().write(text);
}

export interface LineBatcher {
  /** Queues `line` (or several, each ending in a newline). */
  write(line: string): void;
  /** Hands over what is pending now (at exit). */
  flush(): void;
}

/**
 * Collects the lines written during one turn of the event loop and passes
 * them to `target` on the next, joined into chunks of at most `maxBytes` that
 * end at a line end (a single longer line goes alone).
 */
export function batchLines(target: { write(chunk: string): void }, maxBytes = MAX_WRITE): LineBatcher {
  let chunk = '';
  let bytes = 0;
  let full: string[] = [];
  const flush = () => {
    if (chunk) {
      full.push(chunk);
      chunk = '';
      bytes = 0;
    }
    const out = full;
    full = [];
    for (const c of out) target.write(c);
  };
  const schedule = onNextTurn(flush);
  return {
    write(line) {
      const n = Buffer.byteLength(line);
      if (chunk && bytes + n > maxBytes) {
        full.push(chunk);
        chunk = '';
        bytes = 0;
      }
      chunk += line;
      bytes += n;
      schedule();
    },
    flush,
  };
}
