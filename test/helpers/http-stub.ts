/**
 * A local HTTP server for tests to stand in for outside services (an
 * OpenAI-compatible endpoint, a webhook receiver). It records every request
 * and answers with whatever the current `handler` does.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as received. */
  raw: Buffer;
  /** The body parsed as JSON, when it is JSON. */
  json: any;
  /** Resolves when the client closed the connection before the answer was complete (aborted). */
  aborted: Promise<void>;
}

export type Handler = (req: Recorded, res: ServerResponse) => void | Promise<void>;

export interface HttpStub {
  url: string;
  requests: Recorded[];
  handler: Handler;
  close(): Promise<void>;
}

/** Answers JSON with `status`. */
export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** An OpenAI chat-completions answer carrying `content`. */
export function completion(content: string): unknown {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 0,
    model: 'stand-in',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  };
}

export async function startStub(handler: Handler = (_req, res) => json(res, 200, { ok: true })): Promise<HttpStub> {
  const stub: HttpStub = { url: '', requests: [], handler, close: async () => undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw.toString('utf8'));
      } catch {
        parsed = undefined;
      }
      const aborted = new Promise<void>((r) => res.on('close', () => (res.writableFinished ? undefined : r())));
      const rec: Recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, json: parsed, aborted };
      stub.requests.push(rec);
      Promise.resolve(stub.handler(rec, res)).catch((err) => {
        if (!res.headersSent) json(res, 500, { error: String(err) });
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stub.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return stub;
}
