/**
 * Tools of the hostile-input suites: the server they run against (its config,
 * mappings and transform), a raw HTTP exchange that sends bytes exactly as
 * given (slowly, pipelined, endlessly) and reads every answer the server gives
 * on that connection, the server's resident memory, and the "Hostile input"
 * tables of docs/http.md, which the suites check against.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { ROOT, startCli, tempDir, type Running } from './cli.ts';

export const HOSTILE_HOOK = `hk_${randomBytes(18).toString('hex')}`;
export const HOSTILE_GW = `gw_${randomBytes(18).toString('hex')}`;
/** The limits the table's numbers are written for. */
export const LIMIT = 65_536;
export const BODY_TIMEOUT_MS = 500;

export const HOSTILE_TRANSFORMS: Record<string, string> = {
  // looks at everything it is given and describes its shape: arbitrary payloads never make it throw
  'shape.ts': `export default (ctx: { payload: unknown; headers: Record<string, string>; query: Record<string, string> }) => {
    const p = ctx.payload;
    const size = Array.isArray(p) ? p.length : p && typeof p === 'object' ? Object.keys(p).length : 0;
    return { kind: 'wake', text: 'shape ' + typeof p + ' ' + size + ' ' + Object.keys(ctx.headers).length + ' ' + Object.keys(ctx.query).length, mode: 'next-heartbeat' };
  };`,
};

/** The mappings the cases (and the fuzz suite) address: plain templates, the whole payload as JSON, forEach, a transform. */
export function hostileConfig(extra: { hooks?: Record<string, unknown>; gateway?: Record<string, unknown>; mappings?: unknown[] } = {}) {
  return {
    gateway: { auth: { token: HOSTILE_GW }, ...extra.gateway },
    hooks: {
      enabled: true,
      token: HOSTILE_HOOK,
      maxBodyBytes: LIMIT,
      bodyTimeoutMs: BODY_TIMEOUT_MS,
      // failures of one case must not block the next: the throttle has its own cases, on their own server
      authFailures: { max: 1_000_000, windowSeconds: 60 },
      mappings: [
        { id: 'plain', match: { path: 'plain' }, action: 'wake', textTemplate: 'plain {{title}}', wakeMode: 'next-heartbeat' },
        { id: 'json', match: { path: 'json' }, action: 'wake', wakeMode: 'next-heartbeat' },
        {
          id: 'each',
          match: { path: 'each' },
          action: 'wake',
          forEach: 'items',
          textTemplate: 'item {{item.n}}',
          wakeMode: 'next-heartbeat',
        },
        // a generous deadline: under a loaded test machine the property is about input, not timing
        { id: 'tx', match: { path: 'tx' }, transform: { module: 'shape.ts', timeoutMs: 30_000 } },
        ...(extra.mappings ?? []),
      ],
      ...extra.hooks,
    },
    agents: { defaults: { heartbeat: { every: '0' } } },
  };
}

export async function startHostile(extra: Parameters<typeof hostileConfig>[0] = {}, env: Record<string, string> = {}): Promise<Running> {
  const dir = tempDir();
  mkdirSync(join(dir, 'transforms'));
  for (const [f, src] of Object.entries(HOSTILE_TRANSFORMS)) writeFileSync(join(dir, 'transforms', f), src);
  return startCli({ config: hostileConfig(extra), dir, env });
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json: any;
}

export interface Exchange {
  answers: Answer[];
  /** The server closed the connection (FIN or reset) before the exchange ended. */
  closed: boolean;
  /** Bytes this client managed to write. */
  sent: number;
}

export interface ExchangeOptions {
  /** Pause between parts (slow clients). */
  gapMs?: number;
  /** Give up after this long (the exchange resolves with what it has). */
  timeoutMs?: number;
  /** Resolve once this many answers arrived and `settleMs` passed without the server closing (or it closed). */
  answers?: number;
  /** How long to watch for a close after the answers (default 50 ms). */
  settleMs?: number;
  /** Keep writing after an answer arrived (a client that does not listen). */
  keepSending?: boolean;
  /** The request is HEAD: its answers have no body whatever Content-Length says. */
  head?: boolean;
}

/** Parses as many complete answers as `buf` holds. */
export function parseAnswers(buf: Buffer, head = false): Answer[] {
  const out: Answer[] = [];
  let at = 0;
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', at);
    if (end === -1) break;
    const [statusLine, ...lines] = buf.subarray(at, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    let bodyStart = end + 4;
    let body: Buffer;
    if (head) body = Buffer.alloc(0);
    else if (headers['transfer-encoding'] === 'chunked') {
      const parts: Buffer[] = [];
      let p = bodyStart;
      let complete = false;
      for (;;) {
        const eol = buf.indexOf('\r\n', p);
        if (eol === -1) break;
        const size = parseInt(buf.subarray(p, eol).toString('latin1'), 16);
        if (size === 0) {
          if (buf.length < eol + 4) break;
          p = eol + 4;
          complete = true;
          break;
        }
        if (buf.length < eol + 2 + size + 2) break;
        parts.push(buf.subarray(eol + 2, eol + 2 + size));
        p = eol + 2 + size + 2;
      }
      if (!complete) break;
      body = Buffer.concat(parts);
      bodyStart = p;
    } else {
      const len = Number(headers['content-length'] ?? 0);
      if (buf.length < bodyStart + len) break;
      body = buf.subarray(bodyStart, bodyStart + len);
      bodyStart += len;
    }
    const text = body.toString('utf8');
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body: text, json });
    at = head ? end + 4 : bodyStart;
  }
  return out;
}

/**
 * Opens a connection, writes `parts` (a function part is called for the next
 * piece, until it returns undefined: an endless sender), and collects answers
 * until the connection closes, `answers` arrived, or the time is up.
 */
export function exchange(
  url: string,
  parts: (string | Buffer | (() => string | Buffer | undefined))[],
  opts: ExchangeOptions = {},
): Promise<Exchange> {
  const u = new URL(url);
  const want = opts.answers ?? 1;
  return new Promise((resolve) => {
    const sock = connect(Number(u.port), u.hostname);
    let buf = Buffer.alloc(0);
    let sent = 0;
    let closed = false;
    let finished = false;
    let answered = false;
    let settle: NodeJS.Timeout | undefined;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearTimeout(settle);
      resolve({ answers: parseAnswers(buf, opts.head), closed, sent });
      sock.destroy();
    };
    const timer = setTimeout(finish, opts.timeoutMs ?? 15_000);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!answered && parseAnswers(buf, opts.head).length >= want) {
        answered = true;
        // a moment to see whether the server closes the connection after its answer
        settle = setTimeout(finish, opts.settleMs ?? 50);
      }
    });
    const onClosed = () => {
      closed = true;
      // whatever is still buffered has been read: no more answers can come
      setImmediate(finish);
    };
    sock.on('end', onClosed);
    sock.on('close', onClosed);
    sock.on('error', () => undefined);
    sock.on('connect', async () => {
      for (const p of parts) {
        if (typeof p === 'function') {
          for (let piece = p(); piece !== undefined; piece = p()) {
            if (sock.destroyed || closed || (answered && !opts.keepSending)) return;
            sent += Buffer.byteLength(piece);
            if (!sock.write(piece)) await new Promise((r) => sock.once('drain', r).once('close', r));
          }
          continue;
        }
        if (sock.destroyed || closed || (answered && !opts.keepSending)) return;
        sent += Buffer.byteLength(p);
        sock.write(p);
        if (opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
      }
    });
  });
}

/** A request head, sent verbatim. */
export function head(method: string, target: string, headers: Record<string, string | number> = {}, version = 'HTTP/1.1'): string {
  const host = Object.keys(headers).some((k) => k.toLowerCase() === 'host') ? '' : 'Host: localhost\r\n';
  return `${method} ${target} ${version}\r\n${host}${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
}

/** One chunk of a chunked body. */
export function chunk(data: string | Buffer): Buffer {
  const b = typeof data === 'string' ? Buffer.from(data) : data;
  return Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);
}

/**
 * Resident memory of a process in bytes, now and at its peak so far (Linux
 * /proc; elsewhere ps, which knows no peak).
 */
export function rssOf(pid: number): { rss: number; peak: number | undefined } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1]) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    // not Linux: ask ps
  }
  return { rss: Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim()) * 1024, peak: undefined };
}

export interface HostileRow {
  id: string;
  /** The statuses answered, in order, repeats collapsed (empty: closed without an answer). */
  statuses: number[];
  /** The stable codes of the error answers, in order, repeats collapsed. */
  codes: string[];
  /** What becomes of the connection after the answer, when the table says. */
  connection: 'closed' | 'open' | undefined;
}

function section(title: string): string {
  const doc = readFileSync(join(ROOT, 'docs/http.md'), 'utf8');
  const start = doc.indexOf(`\n${title}\n`);
  if (start === -1) throw new Error(`docs/http.md has no "${title}"`);
  const rest = doc.slice(start + title.length + 2);
  const next = rest.search(/\n#{2,3} /);
  return next === -1 ? rest : rest.slice(0, next);
}

function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\|[-| ]+\|$/.test(l))
    .slice(1)
    .map((l) =>
      l
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
}

/** The hostile-input cases of docs/http.md: id → documented answer. */
export function hostileTable(): Map<string, HostileRow> {
  const table = new Map<string, HostileRow>();
  for (const [idCell, , status, code, connection] of rows(section('### Cases'))) {
    const id = /^`([^`]+)`$/.exec(idCell ?? '')?.[1];
    if (!id) throw new Error(`docs/http.md: a hostile case without an id: ${idCell}`);
    if (table.has(id)) throw new Error(`docs/http.md: hostile case ${id} appears twice`);
    table.set(id, {
      id,
      statuses: (status!.match(/\b[1-5]\d\d\b/g) ?? []).map(Number),
      codes: [...(code ?? '').matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!),
      connection: connection === 'closed' || connection === 'open' ? connection : undefined,
    });
  }
  return table;
}

/** The statuses an answer may have and the stable codes of each (docs/http.md, "Statuses and codes"). */
export function statusCodes(): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const [status, codes] of rows(section('### Statuses and codes')))
    out.set(
      Number(status),
      [...(codes ?? '').matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!),
    );
  return out;
}
