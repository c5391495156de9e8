/**
 * The request log line (src/http/respond.ts): the line pino writes for its
 * fields, without the redaction pass, at debug for health and metrics paths.
 */
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { createLogger } from '../../src/log.ts';
import { requestLogger } from '../../src/http/respond.ts';
import type { RequestState } from '../../src/http/state.ts';

function capture(level: string, make: (dest: { write(s: string): void }) => pino.Logger = (d) => createLogger(level, d)) {
  const lines: string[] = [];
  return { logger: make({ write: (s: string) => void lines.push(s) }), lines };
}

/** The line pino writes for the same request, through its own serialisation. */
function viaPino(logger: pino.Logger, method: string, path: string, status: number, ms: number, s: RequestState) {
  logger.child({}, { redact: [] }).info({ method, path, status, ms, ...s }, 'request');
}

const withoutTime = (line: string) => line.replace(/"time":"[^"]*"/, '"time":"T"');

describe('requestLogger()', () => {
  const states: [string, string, RequestState][] = [
    ['a wake', '/hooks/wake', { hook: 'wake', bytes: 131, eventId: '019a9c2e-1d2b-7f3a-9b1c-0123456789ab' }],
    ['a mapped hook', '/hooks/github', { hook: 'github', mapping: 'github-push', bytes: 1300, runId: 'a,b' }],
    ['a path that needs escaping', '/hooks/"quoted"\\back\u0001\u2028ü', { hook: '"quoted"\\back\u0001\u2028ü' }],
    ['nothing recorded', '/other', {}],
  ];

  it.each(states)('%s: writes the line pino would write', (_what, path, state) => {
    const direct = capture('info');
    const reference = capture('info');
    const start = performance.now();
    requestLogger(direct.logger.child({ component: 'http' }))('POST', path, 200, start, state);
    const [line] = direct.lines;
    const ms = JSON.parse(line!).ms as number;
    viaPino(reference.logger.child({ component: 'http' }), 'POST', path, 200, ms, state);
    expect(direct.lines).toHaveLength(1);
    expect(withoutTime(line!)).toBe(withoutTime(reference.lines[0]!));
    expect(JSON.parse(line!).time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(line!.endsWith('}\n')).toBe(true);
  });

  it('logs health and metrics paths at debug, others at info, and nothing below the level', () => {
    const info = capture('info');
    const debug = capture('debug');
    for (const c of [info, debug]) {
      const log = requestLogger(c.logger);
      log('GET', '/healthz', 200, performance.now(), {});
      log('POST', '/hooks/wake', 200, performance.now(), {});
    }
    expect(info.lines.map((l) => JSON.parse(l).path)).toEqual(['/hooks/wake']);
    expect(debug.lines.map((l) => [JSON.parse(l).level, JSON.parse(l).path])).toEqual([
      ['debug', '/healthz'],
      ['info', '/hooks/wake'],
    ]);
    const silent = capture('warn');
    requestLogger(silent.logger)('POST', '/hooks/wake', 500, performance.now(), {});
    expect(silent.lines).toEqual([]);
  });

  it('goes through pino for a logger with another time format', () => {
    const c = capture('info', (d) => pino({ timestamp: pino.stdTimeFunctions.epochTime }, d));
    requestLogger(c.logger)('POST', '/hooks/wake', 200, performance.now(), { hook: 'wake' });
    const line = JSON.parse(c.lines[0]!);
    expect(typeof line.time).toBe('number');
    expect(line).toMatchObject({ level: 30, msg: 'request', method: 'POST', path: '/hooks/wake', status: 200, hook: 'wake' });
  });
});
