/**
 * Reads a request body into one Buffer while enforcing the size limit as the
 * bytes arrive (a huge body is refused, never buffered) and a deadline for the
 * whole body. A declared Content-Length over the limit is refused before any
 * byte is read. A client that waits for `100 Continue` is told to send its body
 * only once it is going to be read (with `res`; the server leaves the interim
 * answer to the app).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors, HookError } from '../errors.ts';
import { Deadlines } from '../util/deadlines.ts';

export interface BodyLimits {
  maxBytes: number;
  timeoutMs: number;
}

/** Deadlines for body reads (each item is the read's way to fail): one timer for them all. */
export function bodyDeadlines(): Deadlines<() => void> {
  return new Deadlines<() => void>((expire) => expire());
}
const READING = bodyDeadlines();

export function readBody(req: IncomingMessage, limits: BodyLimits, res?: ServerResponse, reading = READING): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined) {
    const n = Number(declared);
    if (Number.isFinite(n) && n > limits.maxBytes) return Promise.reject(errors.payloadTooLarge(limits.maxBytes));
  }
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  if (res && /^\s*100-continue\s*$/i.test(req.headers.expect ?? '')) res.writeContinue();
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err: HookError | undefined, body?: Buffer) => {
      reading.delete(watch);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (err) {
        // stop reading; the answer closes the connection
        req.pause();
        reject(err);
      } else resolve(body!);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxBytes) done(errors.payloadTooLarge(limits.maxBytes));
      else chunks.push(chunk);
    };
    const onEnd = () => done(undefined, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    const onError = () =>
      done(new HookError(400, 'BAD_REQUEST', 'the request body could not be read', { headers: { Connection: 'close' } }));
    const onAborted = () => done(new HookError(400, 'BAD_REQUEST', 'the client aborted the request', { headers: { Connection: 'close' } }));
    const watch = reading.add(() => done(errors.requestTimeout(limits.timeoutMs)), performance.now() + limits.timeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
