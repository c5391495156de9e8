/**
 * The HTTP side of a shutdown (`Drain`): once it has begun, answers close
 * their connection and a request on a kept-alive connection is refused.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Drain, guardRequests } from '../../src/http/connection.ts';
import { createLogger } from '../../src/log.ts';
import { until } from '../helpers/cli.ts';
import { parseResponse, requestHead, type RawResponse } from '../helpers/raw.ts';

let server: Server | undefined;
let sock: Socket | undefined;
afterEach(async () => {
  sock?.destroy();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = sock = undefined;
});

/** A server behind `guardRequests` with `drain`; `handler` answers what gets through. */
async function start(drain: Drain, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<number> {
  server = createServer({ ServerResponse: drain.Response }, guardRequests(handler, createLogger('silent'), drain));
  drain.attach(server);
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/** A kept-alive connection: `send` writes a GET, `answers` parses what came back. */
function client(port: number) {
  sock = connect(port, '127.0.0.1');
  let received = '';
  sock.on('data', (d) => (received += d.toString('latin1')));
  const closed = new Promise<void>((r) => sock!.on('close', () => r()));
  const answers = (): RawResponse[] => {
    const out: RawResponse[] = [];
    let text = received;
    for (let r = parseResponse(text); r; r = parseResponse(text)) {
      const len = Number(r.headers['content-length'] ?? 0);
      out.push({ ...r, body: r.body.slice(0, len) });
      text = text.slice(text.indexOf('\r\n\r\n') + 4 + len);
    }
    return out;
  };
  return { send: (path: string) => sock!.write(requestHead('GET', path, {})), answers, closed };
}

const ok = (res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 });
  res.end('ok');
};

describe('Drain', () => {
  it('answers a request in flight when it begins normally, with Connection: close, and ends the connection', async () => {
    const drain = new Drain();
    let answer: (() => void) | undefined;
    const port = await start(drain, (_req, res) => (answer = () => ok(res)));
    const c = client(port);
    c.send('/first');
    await until(() => answer);
    answer!();
    await until(() => c.answers().length === 1);
    expect(c.answers()[0]).toMatchObject({ status: 200, headers: { connection: 'keep-alive' } });

    answer = undefined;
    c.send('/second');
    await until(() => answer);
    drain.begin();
    answer!();
    await c.closed;
    expect(c.answers()[1]).toMatchObject({ status: 200, headers: { connection: 'close' }, body: 'ok' });
  });

  it('refuses a request arriving on a kept-alive connection after it began: 503 SHUTTING_DOWN, Connection: close', async () => {
    const drain = new Drain();
    const seen: string[] = [];
    const port = await start(drain, (req, res) => {
      seen.push(req.url!);
      ok(res);
    });
    const c = client(port);
    c.send('/before');
    await until(() => c.answers().length === 1);
    drain.begin();
    c.send('/after');
    await c.closed;
    const refusal = c.answers()[1]!;
    expect(refusal).toMatchObject({ status: 503, headers: { connection: 'close' } });
    expect(JSON.parse(refusal.body)).toEqual({ ok: false, error: 'the service is shutting down', code: 'SHUTTING_DOWN' });
    expect(seen).toEqual(['/before']);
  });
  it('close(): stops listening at once; a kept-alive connection stays open while the work drains, its request refused; then it ends', async () => {
    const drain = new Drain();
    const port = await start(drain, (_req, res) => ok(res));
    // a second connection that stays idle throughout
    const idle = connect(port, '127.0.0.1');
    let idleClosed = false;
    idle.on('close', () => (idleClosed = true));
    await new Promise((r) => idle.once('connect', r));
    const c = client(port);
    c.send('/before');
    await until(() => c.answers().length === 1);

    let drained!: () => void;
    const stopped = drain.close(new Promise<void>((r) => (drained = r)), () => 60_000);
    // the port is closed at once: a new connection is refused
    const refused = () =>
      new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1');
        s.on('connect', () => {
          s.destroy();
          resolve(false);
        });
        s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
      });
    await until(refused);
    // the kept-alive connection is still open: its next request is refused, and it ends after the answer
    c.send('/during');
    await c.closed;
    expect(c.answers()[1]).toMatchObject({ status: 503, headers: { connection: 'close' } });
    expect(JSON.parse(c.answers()[1]!.body)).toMatchObject({ code: 'SHUTTING_DOWN' });
    // the idle one is kept until the work has drained, then closed
    expect(idleClosed).toBe(false);
    drained();
    await stopped;
    await until(() => idleClosed);
  });
});
