/**
 * The first middleware: every error becomes the one JSON shape, 5xx answers
 * carry no internals, and the one log line per request holds no query string.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Koa from 'koa';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { errorsAndLog } from '../../../src/http/middleware/errors.ts';
import { errors, HookError } from '../../../src/errors.ts';
import { createLogger } from '../../../src/log.ts';

const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
    done();
  },
});

let server: Server;
let base = '';
beforeAll(async () => {
  const app = new Koa();
  app.silent = true;
  app.use(errorsAndLog(createLogger('debug', sink)));
  app.use(async (ctx) => {
    switch (ctx.path) {
      case '/ok':
        ctx.body = { ok: true };
        return;
      case '/invalid':
        throw errors.invalidPayload('text', 'is required');
      case '/no-field':
        throw errors.invalidPayload('', 'the body must be a JSON object');
      case '/limited':
        throw errors.rateLimited(17);
      case '/internal':
        throw new HookError(500, 'TRANSFORM_FAILED', 'secret detail from a transform');
      case '/crash':
        throw new TypeError('cannot read properties of undefined (internal path /srv/app)');
      case '/koa-error':
        ctx.throw(400, 'bad thing');
        return;
      default:
        return; // nothing answered: 404
    }
  });
  server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));
beforeEach(() => {
  lines.length = 0;
});

async function get(path: string) {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

describe('errorsAndLog()', () => {
  it('answers a HookError with its status, code, message and field', async () => {
    expect(await get('/invalid')).toMatchObject({
      status: 400,
      body: { ok: false, error: 'text: is required', code: 'INVALID_PAYLOAD', field: 'text' },
    });
  });

  it('leaves out an empty field', async () => {
    const r = await get('/no-field');
    expect(r.body).toEqual({ ok: false, error: 'the body must be a JSON object', code: 'INVALID_PAYLOAD' });
  });

  it('sets the headers the error carries', async () => {
    const r = await get('/limited');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('17');
  });

  it('answers 404 NOT_FOUND when nothing answered', async () => {
    expect(await get('/nothing')).toEqual(
      expect.objectContaining({ status: 404, body: { ok: false, error: 'not found', code: 'NOT_FOUND' } }),
    );
  });

  it('keeps the message of a 5xx out of the answer and puts it in the log', async () => {
    const r = await get('/internal');
    expect(r).toMatchObject({ status: 500, body: { ok: false, error: 'internal error', code: 'TRANSFORM_FAILED' } });
    expect(JSON.stringify(r.body)).not.toContain('secret detail');
    expect(JSON.stringify(lines)).toContain('secret detail');
  });

  it('answers an unexpected exception with 500 INTERNAL and no details', async () => {
    const r = await get('/crash');
    expect(r).toMatchObject({ status: 500, body: { ok: false, error: 'internal error', code: 'INTERNAL' } });
    expect(lines.find((l) => l.msg === 'request failed')).toBeDefined();
  });

  it('keeps the status of a 4xx raised the Koa way', async () => {
    expect(await get('/koa-error')).toMatchObject({ status: 400, body: { ok: false, error: 'bad thing', code: 'BAD_REQUEST' } });
  });

  it('logs one line per request with method, path and status, without the query string', async () => {
    await get('/ok?token=hk_should_never_be_logged&x=1');
    const requestLines = lines.filter((l) => l.msg === 'request');
    expect(requestLines).toHaveLength(1);
    expect(requestLines[0]).toMatchObject({ level: 'info', method: 'GET', path: '/ok', status: 200 });
    expect(JSON.stringify(lines)).not.toContain('hk_should_never_be_logged');
  });
});
