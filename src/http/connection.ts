/**
 * What happens below the application: requests the HTTP parser refuses
 * before the app sees them (malformed framing, headers too large or too slow)
 * get the one JSON error shape too, a connection closed on an answer that
 * leaves request bytes unread is closed gently enough for the client to read
 * that answer, and at shutdown kept-alive connections stop bringing new work.
 */
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { errors, HookError } from '../errors.ts';
import { settlesWithin } from '../util/deadline.ts';

/**
 * How long a connection closed with request bytes still coming keeps reading
 * (and discarding) them after the answer. Closing at once while the client is
 * still sending makes the kernel answer its next bytes with a reset, and a
 * reset can destroy the answer before the client has read it.
 */
export const LINGER_MS = 2000;

/**
 * At shutdown, how long a kept-alive connection idle at the signal stays open at least (longer
 * while the work drains), so that a request already on its way on it is answered
 * `503 SHUTTING_DOWN` rather than met by a closed socket.
 */
export const IDLE_GRACE_MS = 250;

/** Sockets closing after their last answer: nothing more is read from them as a request. */
const closing = new WeakSet<Socket>();

/**
 * Each connection's answers not finished yet, oldest first (`guardRequests` adds them): the first
 * is the one being written, pipelined requests' answers wait behind it.
 */
const unfinished = new WeakMap<Socket, ServerResponse[]>();

function track(req: IncomingMessage, res: ServerResponse): void {
  const list = unfinished.get(req.socket);
  if (list) list.push(res);
  else unfinished.set(req.socket, [res]);
  const done = () => {
    const l = unfinished.get(req.socket);
    const i = l?.indexOf(res) ?? -1;
    if (i !== -1) l!.splice(i, 1);
  };
  res.once('finish', done);
  res.once('close', done);
}

/**
 * Closes `socket` after its answer without losing the answer: sends FIN,
 * keeps reading for at most `LINGER_MS`, destroys it when the client closes
 * its side or the time is up.
 */
function lingeringClose(socket: Socket, resume: () => void): void {
  if (socket.destroyed) return;
  closing.add(socket);
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy());
  resume();
}

/**
 * For an answer sent before the request body was read in full: once the
 * answer is written, the HTTP server would destroy the socket; instead the
 * socket lingers, the rest of the body is read and dropped.
 */
export function lingerAfterAnswer(req: IncomingMessage): void {
  const socket = req.socket as Socket & { destroySoon?: () => void };
  // Node's HTTP server ends a response marked `Connection: close` with socket.destroySoon()
  socket.destroySoon = () => lingeringClose(socket, () => req.resume());
}

/** Node's parser errors, as the statuses Node itself would answer, with a stable code. */
function refusalFor(errCode: string | undefined): HookError {
  switch (errCode) {
    case 'HPE_HEADER_OVERFLOW':
      return errors.headersTooLarge();
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new HookError(413, 'PAYLOAD_TOO_LARGE', 'chunk extensions too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HookError(408, 'REQUEST_TIMEOUT', 'request not received in time');
    default:
      return errors.badRequest('malformed HTTP request');
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  417: 'Expectation Failed',
  431: 'Request Header Fields Too Large',
};

function jsonBody(e: HookError): string {
  return JSON.stringify({ ok: false, error: e.message, code: e.code });
}

/** Answers `res` with `e` in the JSON error shape and closes the connection gently. */
function refuse(req: IncomingMessage, res: ServerResponse, e: HookError, logger: Logger, what: string): void {
  const body = jsonBody(e);
  logger.info({ method: req.method, status: e.status, code: e.code }, what);
  lingerAfterAnswer(req);
  res.writeHead(e.status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

/**
 * Answers what the HTTP server refuses before the app sees a request with the
 * JSON error shape, and logs one line with the reason (never the bytes):
 * parser errors and slow headers (`clientError`), and an `Expect` other than
 * `100-continue`. It finds the answer in flight on the connection through
 * `guardRequests`, which the server's requests go through.
 */
export function handleClientErrors(server: Server, logger: Logger): void {
  const answered = new WeakSet<Socket>();
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (answered.has(socket)) return; // the parser reports every later chunk of a broken stream again
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    // the answer to the request before the broken bytes, when there is one
    const inFlight = unfinished.get(socket)?.[0];
    answered.add(socket);
    const r = refusalFor(err.code);
    const body = jsonBody(r);
    const answer = `HTTP/1.1 ${r.status} ${REASONS[r.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
    logger.info({ status: r.status, code: r.code, reason: err.code }, 'request refused by the HTTP parser');
    const answerNow = () => {
      if (!socket.writable) return void socket.destroy();
      socket.write(answer);
      lingeringClose(socket, () => socket.resume());
    };
    if (!inFlight) answerNow();
    else if (inFlight.req?.complete) {
      // a whole request came before the broken bytes: it is answered first (it may have been acted on)
      closing.add(socket);
      inFlight.once('finish', answerNow);
    } else if (!inFlight.headersSent) {
      // the broken bytes are inside the request being read: it ends with the connection
      socket.end(answer, () => socket.destroy());
    } else socket.destroy();
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
    refuse(req, res, errors.expectationFailed(), logger, 'request refused by the HTTP server'),
  );
}

/**
 * The HTTP side of a shutdown. Closing the listener stops new connections,
 * but a kept-alive connection would go on bringing requests until the drain
 * deadline. From `begin()` on, every answer (those of requests already in
 * flight included) carries `Connection: close` and ends its connection, and
 * `guardRequests` refuses a request that arrives afterwards on a connection
 * kept alive from before.
 */
export class Drain {
  private on = false;
  private server: Server | undefined;
  /** The server's open connections. */
  private readonly sockets = new Set<Socket>();
  /** The server's response class (`createServer({ServerResponse})`): it closes the connection once draining. */
  readonly Response: typeof ServerResponse<IncomingMessage>;

  constructor() {
    const drain = this;
    this.Response = class DrainingResponse extends ServerResponse {
      override writeHead(statusCode: number, reason?: unknown, headers?: unknown): this {
        // read where the status line and headers are made: `Connection: close`, then the socket ends after the answer
        if (drain.on) this.shouldKeepAlive = false;
        return (super.writeHead as (s: number, r?: unknown, h?: unknown) => this)(statusCode, reason, headers);
      }
    };
  }

  get draining(): boolean {
    return this.on;
  }

  begin(): void {
    this.on = true;
  }

  /** The server `close()` stops; its connections are followed from now on. */
  attach(server: Server): void {
    this.server = server;
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /**
   * Begins, and stops the attached server taking connections at once, then lets the open ones end: a request
   * in progress gets its answer (with `Connection: close`); a request that arrives on a connection
   * kept alive from before is refused with 503 (`guardRequests`). Idle connections close once
   * `work` has drained and at least `IDLE_GRACE_MS` after the signal; whatever is still open when
   * `left()` runs out is closed then. (The `close()` of node:http's server would close the idle
   * connections at once, so a request already on its way on one met a reset; that of net.Server,
   * which it extends, only stops listening.)
   */
  async close(work: Promise<unknown>, left: () => number): Promise<void> {
    const server = this.server!;
    this.begin();
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(IDLE_GRACE_MS, left()))));
    try {
      await settlesWithin(Promise.race([closed, Promise.all([grace, work])]), left());
    } finally {
      clearTimeout(timer);
    }
    server.closeIdleConnections();
    // and those that never sent a byte, which node:http counts as waiting for a request (a browser opens them ahead)
    for (const socket of this.sockets) if (socket.bytesRead === 0) socket.destroy();
    if (!(await settlesWithin(closed, left()))) server.closeAllConnections();
  }
}

/**
 * The request listener around the app: a request that arrives on a connection
 * already closing after its last answer is dropped (the client was told
 * `Connection: close`), so nothing is done that could not be answered; one
 * that arrives once `drain` has begun is refused with `503 SHUTTING_DOWN`. An
 * HTTP/1.1 request without `Host` is refused here, with the JSON error shape
 * (the server is created with `requireHostHeader: false` so it gets here).
 */
export function guardRequests(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  logger: Logger,
  drain?: Drain,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    track(req, res);
    if (closing.has(req.socket)) {
      req.socket.destroy();
      return;
    }
    if (drain?.draining) return refuse(req, res, errors.shuttingDown(), logger, 'request refused by the HTTP server');
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1)
      return refuse(req, res, errors.badRequest('the Host header is missing'), logger, 'request refused by the HTTP server');
    handler(req, res);
  };
}
