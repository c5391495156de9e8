/**
 * What happens below the application: a connection closed on an answer that
 * leaves request bytes unread is closed gently enough for the client to read
 * that answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long a connection closed with request bytes still coming keeps reading
 * (and discarding) them after the answer. Closing at once while the client is
 * still sending makes the kernel answer its next bytes with a reset, and a
 * reset can destroy the answer before the client has read it.
 */
export const LINGER_MS = 2000;

/** Sockets closing after their last answer: nothing more is read from them as a request. */
const closing = new WeakSet<Socket>();

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

/**
 * The request listener around the app: a request that arrives on a connection
 * already closing after its last answer is dropped (the client was told
 * `Connection: close`), so nothing is done that could not be answered.
 */
export function guardRequests(handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (closing.has(req.socket)) {
      req.socket.destroy();
      return;
    }
    handler(req, res);
  };
}
