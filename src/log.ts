/**
 * Structured JSON logs (pino). Tokens, signatures and payloads are never
 * passed to the logger; the redaction list is a second line of defence for
 * header objects that might be logged by mistake.
 */
import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'headers.authorization',
  'headers["x-gateway-token"]',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers["x-gateway-token"]',
  'token',
  '*.token',
  'secret',
  '*.secret',
];

export function createLogger(level: string, dest?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    dest ?? pino.destination({ dest: 1, sync: true }),
  );
}
