/**
 * A stand-in for a chat provider's HTTP API. It listens on 127.0.0.1, records
 * every request, checks each one against the provider's published spec (a
 * `validate` function from provider-specs.ts) and answers from a script of
 * answers given as data, so a test reads as "the service said this, then
 * that". Anything the spec rejects, and any request the script has no answer
 * for, lands in `problems`; `expectClean()` fails the test on any of them.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface StubRequest {
  method: string;
  /** The path without the query string. */
  path: string;
  /** Query parameters; a repeated name gives an array. */
  query: Record<string, string | string[]>;
  headers: IncomingHttpHeaders;
  /** The media type from content-type, lower case, without parameters ('' when absent). */
  contentType: string;
  /** The body exactly as received. */
  raw: Buffer;
  /** JSON bodies parsed; form bodies as name → value (a repeated name gives an array); else undefined. */
  body: any;
  /** Why a body that claims to be JSON did not parse. */
  bodyError?: string;
}

/** One scripted answer. */
export type Answer =
  | { status: number; json?: unknown; text?: string; headers?: Record<string, string> }
  | { hang: true }
  | { destroy: true };

/** A list of answers used in order, or a function of the request and its index (0-based). */
export type Script = Answer[] | ((req: StubRequest, index: number) => Answer);

export type Validate = (req: StubRequest) => string[];

export interface ProviderStub {
  url: string;
  requests: StubRequest[];
  /** Spec violations and unscripted requests, each naming the request. */
  problems: string[];
  /** Fails (throws) when any request broke the spec or had no scripted answer. */
  expectClean(): void;
  /** Replaces the script; list answers start again from the first. */
  setScript(script: Script): void;
  close(): Promise<void>;
}

export interface ProviderStubOptions {
  validate?: Validate;
  script?: Script;
}

const OK: Answer = { status: 200, json: { ok: true } };

/** Parses a request the way the stand-in does; also used by unit tests to feed validators without a server. */
export function toStubRequest(method: string, url: string, headers: IncomingHttpHeaders, raw: Buffer): StubRequest {
  const parsed = new URL(url, 'http://stand-in');
  const contentType = String(headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  const req: StubRequest = {
    method,
    path: parsed.pathname,
    query: collect(parsed.searchParams),
    headers,
    contentType,
    raw,
    body: undefined,
  };
  const text = raw.toString('utf8');
  if (text !== '' && (contentType === 'application/json' || contentType.endsWith('+json'))) {
    try {
      req.body = JSON.parse(text);
    } catch (err) {
      req.bodyError = `body is not JSON: ${(err as Error).message}`;
    }
  } else if (contentType === 'application/x-www-form-urlencoded') {
    req.body = collect(new URLSearchParams(text));
  }
  return req;
}

/** A request built by hand, for validator tests: a JSON body unless `form` is given. */
export function fakeRequest(opts: {
  method?: string;
  path: string;
  json?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
}): StubRequest {
  let raw = Buffer.alloc(0);
  const headers: IncomingHttpHeaders = { ...opts.headers };
  if (opts.form) {
    raw = Buffer.from(new URLSearchParams(opts.form).toString());
    headers['content-type'] ??= 'application/x-www-form-urlencoded';
  } else if (opts.json !== undefined) {
    raw = Buffer.from(JSON.stringify(opts.json));
    headers['content-type'] ??= 'application/json';
  }
  return toStubRequest(opts.method ?? 'POST', opts.path, headers, raw);
}

function collect(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of params) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

function answer(res: ServerResponse, a: Answer, sockets: Set<Socket>): void {
  if ('destroy' in a) {
    res.socket?.destroy();
    return;
  }
  if ('hang' in a) {
    // never answered; close() ends the connection
    if (res.socket) sockets.add(res.socket);
    return;
  }
  const text = a.json !== undefined ? JSON.stringify(a.json) : (a.text ?? '');
  const type = a.json !== undefined ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8';
  res.writeHead(a.status, { 'content-type': type, 'content-length': Buffer.byteLength(text), ...a.headers });
  res.end(text);
}

export async function startProviderStub(opts: ProviderStubOptions = {}): Promise<ProviderStub> {
  let script: Script = opts.script ?? [OK];
  let next = 0;
  const hanging = new Set<Socket>();
  const stub: ProviderStub = {
    url: '',
    requests: [],
    problems: [],
    expectClean() {
      if (stub.problems.length > 0) throw new Error(`the stand-in saw requests the spec rejects:\n${stub.problems.join('\n')}`);
    },
    setScript(s) {
      script = s;
      next = 0;
    },
    close: async () => undefined,
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec = toStubRequest(req.method ?? '', req.url ?? '/', req.headers, Buffer.concat(chunks));
      const index = stub.requests.length;
      stub.requests.push(rec);
      const label = `#${index} ${rec.method} ${rec.path}`;
      const found = [...(rec.bodyError ? [rec.bodyError] : []), ...(opts.validate?.(rec) ?? [])];
      for (const p of found) stub.problems.push(`${label}: ${p}`);
      let a: Answer | undefined;
      if (typeof script === 'function') a = script(rec, index);
      else a = script[next++];
      if (!a) {
        stub.problems.push(`${label}: no scripted answer left`);
        a = { status: 500, json: { error: 'the stand-in has no scripted answer for this request' } };
      }
      answer(res, a, hanging);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stub.close = () =>
    new Promise<void>((r) => {
      for (const s of hanging) s.destroy();
      server.close(() => r());
      server.closeAllConnections();
    });
  return stub;
}

/** Answers every request the same way (a script for "always fine"). */
export function always(a: Answer): Script {
  return () => a;
}
