/**
 * Structured JSON logs (pino). Tokens, signatures and payloads are never
 * passed to the logger; the redaction list is a second line of defence for
 * header objects that might be logged by mistake.
 */
import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

// Provider signature headers (the defaults of src/auth/signature-schemes.ts):
// not secrets, but a valid signature lets anyone replay its request while the
// timestamp window lasts, so they are kept out of logs like tokens.
const SIGNATURE_HEADERS = ['x-hub-signature-256', 'x-hub-signature', 'stripe-signature', 'x-slack-signature', 'webhook-signature', 'x-signature'];

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

/**
 * Standard output by default, written asynchronously: lines logged while a
 * write is in flight are batched into the next one, so a busy server makes
 * one write per batch instead of one blocking write per line. pino flushes
 * what is pending when the process exits (including after SIGTERM). Writes
 * stay at most 4 KiB, the size a pipe takes atomically, so log lines never
 * interleave mid-line with other output on stdout (`listening on …`, the
 * console channel).
 */
export function createLogger(level: string, dest?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    dest ?? pino.destination({ dest: 1, sync: false, maxWrite: 4096 }),
  );
}
