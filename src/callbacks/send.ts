/**
 * One POST of an event to a callback's URL (docs/callbacks.md, "Delivery" and "Addresses"), over
 * node:http or node:https with a connection of its own. The host is resolved by `lookup`, which refuses
 * an address that is not public (unless allowed) before the socket connects to it: the address checked
 * is the address connected to. An IP literal in the URL, which Node connects to without a lookup, is
 * checked first. Redirects are not followed: a 3xx is a failure with its status.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isRetryableStatus, parseRetryAfter } from '../plugin-api/http.ts';
import { USER_AGENT } from '../plugin-api/user-agent.ts';
import { notPublic } from './address.ts';

/** A host's addresses, as `dns.lookup(host, {all: true})` gives them. */
export type Resolve = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true });

/** How long one attempt waits for the answer's status line and headers. */
export const SEND_TIMEOUT_MS = 15_000;

export interface SendRequest {
  url: URL;
  body: string;
  /** Beside Content-Type and User-Agent: the signature's headers. */
  headers: Record<string, string>;
  allowPrivateNetwork: boolean;
  /** Aborts the attempt (the service is stopping). */
  signal: AbortSignal;
  resolve?: Resolve;
  timeoutMs?: number;
  clock?: () => number;
}

export type SendResult =
  | { ok: true; status: number }
  | { ok: false; reason: string; retryable: boolean; retryAfterMs?: number | undefined };

/** An address the callback may not connect to: the attempt fails for good. */
class AddressRefused extends Error {}

const refusal = (host: string, address: string, why: string) =>
  new AddressRefused(
    `refused: ${host === address ? address : `${host} resolves to ${address}`}, ${why} (set allowPrivateNetwork to allow it)`,
  );

/** Sends `r.body`; resolves with what came of it, never rejects. */
export function sendEvent(r: SendRequest): Promise<SendResult> {
  const host = r.url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !r.allowPrivateNetwork) {
    const why = notPublic(host);
    if (why) return Promise.resolve({ ok: false, retryable: false, reason: refusal(host, host, why).message });
  }
  const transport = r.url.protocol === 'https:' ? https : http;
  const timeoutMs = r.timeoutMs ?? SEND_TIMEOUT_MS;
  return new Promise((done) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done(result);
    };
    const req = transport.request(r.url, {
      method: 'POST',
      // a connection of its own: a pooled one may have been opened under another callback's rules
      agent: false,
      lookup: guardedLookup(r.resolve ?? systemResolve, r.allowPrivateNetwork),
      signal: r.signal,
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(r.body)),
        'user-agent': USER_AGENT,
        ...r.headers,
      },
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    timer.unref();
    req.on('response', (res) => {
      finish(answerOf(res, r.clock ?? Date.now));
      // the body is not read: the status says it all, and the connection is this attempt's alone
      res.destroy();
    });
    req.on('error', (err) => finish(failureOf(err)));
    req.end(r.body);
  });
}

function answerOf(res: IncomingMessage, clock: () => number): SendResult {
  const status = res.statusCode ?? 0;
  if (status >= 200 && status < 300) return { ok: true, status };
  if (status >= 300 && status < 400) return { ok: false, retryable: false, reason: `HTTP ${status}: a redirect, which is not followed` };
  const retryable = isRetryableStatus(status);
  const after = res.headers['retry-after'];
  return {
    ok: false,
    retryable,
    reason: `HTTP ${status}`,
    retryAfterMs: retryable ? parseRetryAfter(Array.isArray(after) ? after[0] : after, clock()) : undefined,
  };
}

function failureOf(err: Error): SendResult {
  if (err instanceof AddressRefused) return { ok: false, retryable: false, reason: err.message };
  const code = (err as NodeJS.ErrnoException).code;
  const text = err.message.replace(/\s+/g, ' ').slice(0, 300);
  return { ok: false, retryable: true, reason: code && !text.includes(code) ? `${code}: ${text}` : text };
}

/** A `lookup` for the socket that resolves with `resolve` and refuses, before any connection, an address that is not public. */
function guardedLookup(resolve: Resolve, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (found) => {
        const family = options.family === 4 || options.family === 6 ? options.family : undefined;
        const addresses = family ? found.filter((a) => a.family === family) : found;
        if (!addresses.length) {
          const err: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
          err.code = 'ENOTFOUND';
          return callback(err, '', 0);
        }
        if (!allowPrivate)
          for (const a of addresses) {
            const why = notPublic(a.address);
            if (why) return callback(refusal(hostname, a.address, why), '', 0);
          }
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
