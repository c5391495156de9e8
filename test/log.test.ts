import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.ts';

function capture() {
  const lines: string[] = [];
  const dest = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger('info', dest as never), lines };
}

describe('createLogger() redaction', () => {
  it.each(['x-hub-signature-256', 'stripe-signature', 'x-slack-signature', 'webhook-signature', 'x-signature', 'authorization', 'x-gateway-token'])(
    'never writes the %s header, at the top level or one level down',
    (name) => {
      const { logger, lines } = capture();
      const value = `sensitive-${name}-0123456789abcdef`;
      logger.info({ headers: { [name]: value, 'content-type': 'application/json' } }, 'top');
      logger.info({ req: { headers: { [name]: value } } }, 'nested');
      expect(lines).toHaveLength(2);
      for (const line of lines) {
        expect(line).not.toContain(value);
        expect(line).toContain('[redacted]');
      }
      expect(lines[0]).toContain('application/json');
    },
  );

  it('never writes a secret or a token field', () => {
    const { logger, lines } = capture();
    logger.info({ secret: 'whsec_abc', verify: { secret: 'whsec_def' }, token: 't1', hooks: { token: 't2' } }, 'x');
    for (const s of ['whsec_abc', 'whsec_def', '"t1"', '"t2"']) expect(lines[0]).not.toContain(s);
  });
});
