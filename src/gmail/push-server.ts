/**
 * The Pub/Sub push endpoint: `POST <serve.path>` only; every other path is 404 and every other
 * method on it 405. A push is authenticated before its body is read into a notice; then the
 * bridge decides the answer: 204 when every new message was accepted by the hook, 503 when
 * Pub/Sub must deliver it again. The URL (it carries the push token) is never logged.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '../log.ts';
import type { Bridge, Notice } from './bridge.ts';
import type { PushAuth } from './push-auth.ts';

const MAX_PUSH_BYTES = 1024 * 1024;

export function pushServer(path: string, auth: PushAuth, bridge: Bridge, log: Logger): Server {
  return createServer((req, res) => {
    handle(req, res, path, auth, bridge, log).catch((err: Error) => {
      log.error({ err: err.message }, 'gmail: push handling failed');
      answer(res, 500, 'internal error');
    });
  });
}

function answer(res: ServerResponse, status: number, error?: string): void {
  if (res.headersSent) return;
  if (status === 204) {
    res.writeHead(204).end();
    return;
  }
  const text = JSON.stringify(error ? { ok: false, error } : { ok: true });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

async function handle(req: IncomingMessage, res: ServerResponse, path: string, auth: PushAuth, bridge: Bridge, log: Logger): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://push.invalid');
  if (url.pathname !== path) return answer(res, 404, 'not found');
  if (req.method !== 'POST') return answer(res, 405, 'method not allowed');
  const who = await auth.check(url.searchParams.get('token'), req.headers.authorization);
  if (!who.ok) {
    log.warn({ reason: who.reason }, 'gmail: push refused');
    req.resume();
    return answer(res, 401, 'unauthorized');
  }
  const raw = await readBody(req);
  if (raw === undefined) return answer(res, 413, 'push body too large');
  const notice = parseNotice(raw);
  if (typeof notice === 'string') {
    log.warn({ reason: notice }, 'gmail: push refused');
    return answer(res, 400, notice);
  }
  const outcome = await bridge.handle(notice);
  answer(res, outcome === 'done' ? 204 : 503, outcome === 'done' ? undefined : 'not every message was accepted; deliver again');
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_PUSH_BYTES) {
        req.destroy();
        resolve(undefined);
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The notice in a push body (`message.data`: base64 of `{emailAddress, historyId}`), or why not. */
export function parseNotice(raw: Buffer): Notice | string {
  let push: { message?: { data?: unknown } };
  try {
    push = JSON.parse(raw.toString('utf8')) as typeof push;
  } catch {
    return 'the push is not JSON with base64 JSON in message.data';
  }
  return noticeFromData(push?.message?.data);
}

/** The notice in a Pub/Sub message's `data` (base64 of `{emailAddress, historyId}`), or why not. */
export function noticeFromData(raw: unknown): Notice | string {
  if (typeof raw !== 'string') return 'message.data is missing';
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(raw, 'base64').toString('utf8'));
  } catch {
    return 'message.data is not base64 JSON';
  }
  const d = (data ?? {}) as { emailAddress?: unknown; historyId?: unknown };
  if (typeof d.emailAddress !== 'string' || !d.emailAddress) return 'message.data.emailAddress is missing';
  const historyId = typeof d.historyId === 'number' ? String(d.historyId) : d.historyId;
  if (typeof historyId !== 'string' || !/^[0-9]{1,20}$/.test(historyId)) return 'message.data.historyId is not a number';
  return { emailAddress: d.emailAddress, historyId };
}
