/**
 * The pretty log format (`serve --log-format pretty`, the default at a terminal): one readable
 * line per log line, stacks on indented lines after it, the same redaction as the JSON lines.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, logFormat, prettyLine } from '../src/log.ts';
import { cleanup, post, startCli, type Running } from './helpers/cli.ts';

describe('prettyLine()', () => {
  it('local time, level, component, message, then key=value; strings with spaces quoted', () => {
    const time = new Date(2026, 10, 25, 8, 5, 9, 42).toISOString();
    const line = JSON.stringify({
      level: 'info',
      time,
      pid: 7,
      component: 'outbox',
      runId: 'r1',
      attempt: 2,
      reason: 'connection refused',
      ok: true,
      to: null,
      tags: ['a'],
      msg: 'delivered',
    });
    expect(prettyLine(line)).toBe(
      '08:05:09.042 INFO  [outbox] delivered runId=r1 attempt=2 reason="connection refused" ok=true to=null tags=["a"]\n',
    );
  });

  it('puts a stack on indented lines after the line, from `stack` or `err`', () => {
    const time = new Date(2026, 10, 25, 8, 0, 0, 0).toISOString();
    const stack = 'RangeError: too large\n    at default (file:///t/boom.ts:3:32)';
    expect(prettyLine(JSON.stringify({ level: 'error', time, msg: 'transform failed', mapping: 'm', stack }))).toBe(
      '08:00:00.000 ERROR transform failed mapping=m\n    RangeError: too large\n        at default (file:///t/boom.ts:3:32)\n',
    );
    expect(
      prettyLine(
        JSON.stringify({
          level: 'error',
          time,
          msg: 'request failed',
          err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (x.ts:1:1)' },
        }),
      ),
    ).toBe('08:00:00.000 ERROR request failed err=boom\n    Error: boom\n        at f (x.ts:1:1)\n');
  });

  it('passes a line that is not JSON through as it is', () => {
    expect(prettyLine('not json\n')).toBe('not json\n');
  });

  it('keeps the redaction of the JSON lines', () => {
    const lines: string[] = [];
    const log = createLogger('info', { write: (s: string) => void lines.push(s) }, 'pretty');
    log.info({ headers: { authorization: 'Bearer secret-token-value' }, token: 'secret-token-value' }, 'x');
    expect(lines.join('')).not.toContain('secret-token-value');
    expect(lines.join('')).toContain('token=[redacted]');
  });
});

describe('logFormat()', () => {
  it('is pretty at a terminal and JSON otherwise, unless given; anything else is refused', () => {
    expect(logFormat(undefined, true)).toBe('pretty');
    expect(logFormat(undefined, false)).toBe('json');
    expect(logFormat('json', true)).toBe('json');
    expect(logFormat('pretty', false)).toBe('pretty');
    expect(() => logFormat('xml', false)).toThrow('--log-format must be json or pretty, not "xml"');
  });
});

describe('serve --log-format pretty', () => {
  let s: Running | undefined;
  afterEach(async () => {
    if (s) {
      await s.stop();
      cleanup(s.dir);
      s = undefined;
    }
  });

  it('writes readable request lines instead of JSON', async () => {
    const token = 'hook-token-0123456789abcdef0123';
    s = await startCli({ config: { hooks: { enabled: true, token } }, args: ['--log-format', 'pretty'] });
    expect(
      (await post(`${s.url}/hooks/wake`, { text: 'hello', mode: 'next-heartbeat' }, { authorization: `Bearer ${token}` })).status,
    ).toBe(200);
    await s.waitFor(/\d\d:\d\d:\d\d\.\d{3} INFO {2}request method=POST path=\/hooks\/wake status=200 /);
    expect(s.output()).not.toMatch(/^\{"level"/m);
    expect(s.output()).not.toContain(token);
  });
});
