/**
 * Raw HTTP over a socket, for what fetch cannot express: a body that arrives
 * slowly, a lying Content-Length, odd paths sent verbatim.
 */
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** True when the server closed the connection after answering. */
  closed: boolean;
}

export function parseResponse(text: string): RawResponse | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const len = Number(headers['content-length'] ?? 0);
  const body = text.slice(end + 4);
  if (Buffer.byteLength(body) < len) return undefined;
  return { status: Number(statusLine!.split(' ')[1]), headers, body, closed: false };
}

/**
 * Sends `parts` (strings or buffers) with `gapMs` between them and resolves
 * with the first complete response.
 */
export function rawRequest(url: string, parts: (string | Buffer)[], gapMs = 0, timeoutMs = 20_000): Promise<RawResponse> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname);
    let buf = '';
    let answered: RawResponse | undefined;
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no response in ${timeoutMs} ms; got: ${buf}`));
    }, timeoutMs);
    sock.on('data', (d) => {
      buf += d.toString('utf8');
      answered ??= parseResponse(buf);
      if (answered) {
        clearTimeout(timer);
        // wait a moment to see whether the server closes the connection
        setTimeout(() => {
          resolve({ ...answered!, closed: sock.destroyed || sock.readableEnded });
          sock.destroy();
        }, 50);
      }
    });
    sock.on('end', () => {
      if (answered) answered.closed = true;
    });
    sock.on('error', (err) => {
      if (!answered) {
        clearTimeout(timer);
        reject(err);
      }
    });
    sock.on('connect', async () => {
      for (const p of parts) {
        if (sock.destroyed || answered) return;
        sock.write(p);
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
    });
  });
}

export function requestHead(method: string, path: string, headers: Record<string, string | number>): string {
  return `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
}
