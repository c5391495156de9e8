/**
 * A stand-in for Cloud Pub/Sub on 127.0.0.1: one pull subscription, `projects.subscriptions.pull`
 * and `projects.subscriptions.acknowledge`, with every request checked against Google's discovery
 * document (`test/fixtures/specs/pubsub/pubsub-v1-pull.json`) and each answer against its response
 * schema; a mismatch is answered 400 and kept in `mismatches` (tests expect it empty). Access
 * tokens are the Google stand-in's: an unknown one gets 401, one without the Pub/Sub scope 403.
 *
 * Its behaviour is scripted as data: `publish` puts a Gmail notice in the backlog, `faults`
 * answers the next calls of a method with an error, `expireDeadlines` hands out again what was
 * handed out and not acknowledged (the ack deadline passed), `redeliver` hands out a message again
 * even though it was acknowledged (Pub/Sub delivers at least once). A pull with nothing to hand
 * out waits, as a long poll does, until something can be handed out or the client gives up.
 */
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { discoveryChecker } from './discovery.ts';
import { type GoogleStandIn, insufficientScope, PUBSUB_SCOPE } from './google-standin.ts';

const pubsub = discoveryChecker(
  JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/specs/pubsub/pubsub-v1-pull.json'), 'utf8')),
);
export const checkPubSubRequest = pubsub.checkRequest;

const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';

/** The next call of `method` gets this answer instead of its own; `reset` drops the connection. */
export type Fault =
  | { method: 'pull' | 'acknowledge'; status: number; retryAfter?: string }
  | { method: 'pull' | 'acknowledge'; reset: true };

interface Held {
  messageId: string;
  data: string;
  publishTime: string;
  attempts: number;
  /** Handed out and waiting for its acknowledgement (the ack ids it was handed out with). */
  out: string[];
  acked: boolean;
}

export interface PubSubStandIn {
  url: string;
  /** The subscription's full name. */
  subscription: string;
  /** Calls by discovery method id, with their bodies, in order. */
  calls: { id: string; body: any }[];
  mismatches: string[];
  faults: Fault[];
  /** Message ids in the order they were acknowledged (a repeat acknowledgement counts again). */
  acked: string[];
  /** Puts `{emailAddress, historyId}` (or any JSON) in the backlog as Gmail would publish it; returns the message id. */
  publish(notice: { emailAddress: string; historyId: string } | Record<string, unknown>): string;
  /** The ack deadline passes: each message handed out and not acknowledged can be handed out again. */
  expireDeadlines(): void;
  /** Pub/Sub hands an acknowledged message out once more. */
  redeliver(messageId: string): void;
  /** How many times a message was handed out. */
  deliveries(messageId: string): number;
  /** Message ids handed out and not acknowledged. */
  outstanding(): string[];
  /** Pulls waiting for a message right now. */
  waiting(): number;
  close(): Promise<void>;
}

export async function startPubSub(google: GoogleStandIn, subscription = 'projects/proj/subscriptions/gmail-pull'): Promise<PubSubStandIn> {
  const messages: Held[] = [];
  /** Messages that can be handed out, in order. */
  const ready: Held[] = [];
  const waiters = new Set<() => void>();
  let next = 1;
  let ackSeq = 1;
  // on the next turn, so that messages published together are handed out in one answer
  const wake = () =>
    setImmediate(() => {
      for (const w of [...waiters]) w();
    });
  const p: PubSubStandIn = {
    url: '',
    subscription,
    calls: [],
    mismatches: [],
    faults: [],
    acked: [],
    publish(notice) {
      const messageId = String(9_000_000_000 + next++);
      const data = Buffer.from(JSON.stringify(notice)).toString('base64');
      const m: Held = { messageId, data, publishTime: '2026-11-20T09:12:03.409Z', attempts: 0, out: [], acked: false };
      messages.push(m);
      ready.push(m);
      wake();
      return messageId;
    },
    expireDeadlines() {
      for (const m of messages) if (!m.acked && m.out.length && !ready.includes(m)) ready.push(m);
      wake();
    },
    redeliver(messageId) {
      const m = messages.find((x) => x.messageId === messageId)!;
      if (!ready.includes(m)) ready.push(m);
      wake();
    },
    deliveries: (messageId) => messages.find((m) => m.messageId === messageId)?.attempts ?? 0,
    outstanding: () => messages.filter((m) => !m.acked && m.out.length).map((m) => m.messageId),
    waiting: () => waiters.size,
    close: async () => undefined,
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers }).end(JSON.stringify(body));
  };
  const answer = (res: ServerResponse, id: string, body: unknown, schema: string) => {
    p.mismatches.push(...pubsub.shapeProblems(body, { $ref: schema }, `${id} answer`));
    send(res, 200, body);
  };
  const error = (res: ServerResponse, code: number, status: string, message: string, headers: Record<string, string> = {}) =>
    send(res, code, { error: { code, message, status } }, headers);

  function handOut(max: number): unknown[] {
    return ready.splice(0, max).map((m) => {
      m.attempts++;
      const ackId = `ack-${ackSeq++}-${m.messageId}`;
      m.out.push(ackId);
      return {
        ackId,
        message: { data: m.data, messageId: m.messageId, publishTime: m.publishTime },
        deliveryAttempt: m.attempts,
      };
    });
  }

  function pull(res: ServerResponse, id: string, max: number): void {
    if (ready.length) return answer(res, id, { receivedMessages: handOut(max) }, 'PullResponse');
    // a long poll: answered when something can be handed out, dropped when the client gives up
    const w = () => {
      waiters.delete(w);
      if (res.destroyed) return;
      const got = handOut(max);
      answer(res, id, got.length ? { receivedMessages: got } : {}, 'PullResponse');
    };
    waiters.add(w);
    res.on('close', () => waiters.delete(w));
  }

  function acknowledge(res: ServerResponse, id: string, ackIds: string[]): void {
    const found = ackIds.map((a) => messages.find((m) => m.out.includes(a)));
    if (found.some((m) => !m)) return error(res, 400, 'INVALID_ARGUMENT', 'Some acknowledgement ids in the request were invalid.');
    for (const m of found as Held[]) {
      m.acked = true;
      p.acked.push(m.messageId);
      const i = ready.indexOf(m);
      if (i !== -1) ready.splice(i, 1);
    }
    answer(res, id, {}, 'Empty');
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', p.url);
      let body: any;
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      } catch {
        body = Buffer.concat(chunks).toString('utf8');
      }
      const { id, problems } = pubsub.checkRequest(req.method ?? 'GET', url, body);
      if (id) p.calls.push({ id, body });
      if (req.headers['content-type'] !== 'application/json') problems.push(`${id}: content-type is not application/json`);
      // what the descriptions add: maxMessages "Must be a positive integer", ackIds "Must not be empty"
      if (id === 'pubsub.projects.subscriptions.pull' && !(body?.maxMessages > 0)) problems.push(`${id}: maxMessages must be positive`);
      if (id === 'pubsub.projects.subscriptions.acknowledge' && !body?.ackIds?.length) problems.push(`${id}: ackIds must not be empty`);
      if (problems.length) {
        p.mismatches.push(...problems);
        return error(res, 400, 'INVALID_ARGUMENT', problems.join('; '));
      }
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const scopes = token ? google.scopesOf(token) : undefined;
      if (!scopes) return error(res, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
      if (!scopes.includes(PUBSUB_SCOPE) && !scopes.includes(CLOUD_PLATFORM)) return send(res, ...insufficientScope());
      const method = id === 'pubsub.projects.subscriptions.pull' ? 'pull' : 'acknowledge';
      const fault = p.faults.findIndex((f) => f.method === method);
      if (fault !== -1) {
        const [f] = p.faults.splice(fault, 1);
        if ('reset' in f!) return req.socket.destroy();
        const headers: Record<string, string> = f!.retryAfter ? { 'retry-after': f!.retryAfter } : {};
        const status = f!.status === 429 ? 'RESOURCE_EXHAUSTED' : f!.status >= 500 ? 'UNAVAILABLE' : 'FAILED_PRECONDITION';
        return error(res, f!.status, status, 'scripted fault', headers);
      }
      const name = decodeURIComponent(url.pathname)
        .replace(/^\/v1\//, '')
        .replace(/:\w+$/, '');
      if (name !== subscription) return error(res, 404, 'NOT_FOUND', `Resource not found (resource=${name.split('/').at(-1)}).`);
      if (method === 'pull') return pull(res, id!, body.maxMessages);
      return acknowledge(res, id!, body.ackIds);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  p.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  p.close = () =>
    new Promise((r) => {
      waiters.clear();
      server.closeAllConnections();
      server.close(() => r());
    });
  return p;
}
