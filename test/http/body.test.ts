/**
 * Reading a request body under a size limit and a deadline. The request is a
 * stream stand-in and the deadline runs on fake timers: no sockets, no sleeps.
 */
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { bodyDeadlines, readBody } from '../../src/http/body.ts';
import { HookError } from '../../src/errors.ts';

const LIMITS = { maxBytes: 10, timeoutMs: 30_000 };

function request(headers: Record<string, string> = {}) {
  const stream = new PassThrough();
  const req = Object.assign(stream, { headers }) as unknown as IncomingMessage & PassThrough;
  return req;
}

/** The settled state of a promise after pending callbacks have run. */
async function state<T>(p: Promise<T>): Promise<'pending' | 'resolved' | 'rejected'> {
  let s: 'pending' | 'resolved' | 'rejected' = 'pending';
  p.then(
    () => (s = 'resolved'),
    () => (s = 'rejected'),
  );
  await new Promise((r) => setImmediate(r));
  return s;
}

async function rejection(p: Promise<unknown>): Promise<HookError> {
  const err = await p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HookError);
  return err as HookError;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('readBody()', () => {
  it('collects the chunks of a body', async () => {
    const req = request();
    const body = readBody(req, LIMITS);
    req.write('{"a"');
    req.end(':1}');
    expect((await body).toString()).toBe('{"a":1}');
  });

  it('accepts a body of exactly the limit', async () => {
    const req = request({ 'content-length': '10' });
    const body = readBody(req, LIMITS);
    req.end('0123456789');
    expect((await body).length).toBe(10);
  });

  it('refuses a declared Content-Length over the limit without reading a byte', async () => {
    const req = request({ 'content-length': '11' });
    const read = vi.spyOn(req, 'read');
    const err = await rejection(readBody(req, LIMITS));
    expect(err).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE', headers: { Connection: 'close' } });
    expect(read).not.toHaveBeenCalled();
    expect(req.listenerCount('data')).toBe(0);
  });

  it('sends 100 Continue to a client that waits for it, but only when the body is going to be read', async () => {
    const writeContinue = vi.fn();
    const res = { writeContinue } as unknown as Parameters<typeof readBody>[2];
    await rejection(readBody(request({ 'content-length': '11', expect: '100-continue' }), LIMITS, res));
    expect(writeContinue).not.toHaveBeenCalled();
    const req = request({ 'content-length': '2', expect: '100-Continue' });
    const body = readBody(req, LIMITS, res);
    expect(writeContinue).toHaveBeenCalledOnce();
    req.end('{}');
    expect((await body).toString()).toBe('{}');
    const plain = request({ 'content-length': '2' });
    const read = readBody(plain, LIMITS, res);
    plain.end('{}');
    await read;
    expect(writeContinue).toHaveBeenCalledOnce();
  });

  it('refuses a body that grows past the limit while streaming, and stops reading', async () => {
    const req = request(); // chunked: no Content-Length
    const body = readBody(req, LIMITS);
    req.write('012345');
    expect(await state(body)).toBe('pending');
    req.write('6789X');
    expect(await rejection(body)).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect(req.isPaused()).toBe(true);
    expect(req.listenerCount('data')).toBe(0);
  });

  it('refuses a body longer than a Content-Length that understated it', async () => {
    const req = request({ 'content-length': '2' });
    const body = readBody(req, LIMITS);
    req.write('0123456789ABC');
    expect((await rejection(body)).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers 408 when the whole body has not arrived within the deadline', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const req = request({ 'content-length': '10' });
    const body = readBody(req, LIMITS, undefined, bodyDeadlines());
    req.write('01234');
    vi.advanceTimersByTime(29_999);
    expect(await state(body)).toBe('pending');
    vi.advanceTimersByTime(1);
    expect(await rejection(body)).toMatchObject({ status: 408, code: 'REQUEST_TIMEOUT', headers: { Connection: 'close' } });
  });

  it('forgets its deadline once the body is complete', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const deadlines = bodyDeadlines();
    const req = request();
    const body = readBody(req, LIMITS, undefined, deadlines);
    expect(deadlines.size).toBe(1);
    req.end('{}');
    await body;
    expect(deadlines.size).toBe(0);
    // the deadline passing later changes nothing: the stream is not paused
    vi.advanceTimersByTime(LIMITS.timeoutMs);
    expect(req.isPaused()).toBe(false);
  });

  it.each([
    ['aborted', () => undefined],
    ['error', () => new Error('socket hang up')],
  ])('answers 400 BAD_REQUEST when the request emits %s', async (event, arg) => {
    const req = request();
    const body = readBody(req, LIMITS);
    req.emit(event, arg());
    expect(await rejection(body)).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
  });

  it('returns an empty buffer for a request that has already ended', async () => {
    const req = request();
    req.end();
    req.resume();
    await new Promise((r) => req.on('end', r));
    expect((await readBody(req, LIMITS)).length).toBe(0);
  });
});
