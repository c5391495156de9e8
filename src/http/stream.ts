/**
 * `GET /api/stream`: server-sent events for the console. One timer for every
 * open stream looks at the overview's figures each `everyMs` and sends them
 * (`event: stats`) when they changed, so a page refreshes what it shows
 * instead of polling; a comment line every `keepAliveMs` keeps proxies from
 * closing an idle stream. A console's stream ends when its session does
 * (`event: signed-out`), and every stream ends when the service stops.
 */
import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import type { ConsoleSession, ConsoleSessions } from '../auth/sessions.ts';

export interface FeedOptions {
  /** The figures to send; a change in their JSON is what is sent. */
  snapshot: () => Promise<unknown>;
  sessions: ConsoleSessions;
  clock: () => number;
  everyMs?: number;
  keepAliveMs?: number;
  /** At most this many streams at once; one more is refused (503). */
  maxStreams?: number;
}

interface Client {
  out: PassThrough;
  session: ConsoleSession | undefined;
  /** The figures this stream was last sent. */
  last?: string;
}

export class ConsoleFeed {
  private readonly clients = new Set<Client>();
  private readonly opts: Required<FeedOptions>;
  private timer: NodeJS.Timeout | undefined;
  private sinceKeepAlive = 0;
  private ticking = false;
  private closed = false;

  constructor(opts: FeedOptions) {
    this.opts = { everyMs: 1000, keepAliveMs: 15_000, maxStreams: 100, ...opts };
  }

  /** Answers `ctx` with a stream: the current figures at once, then each change. */
  open(ctx: Context, session: ConsoleSession | undefined): void {
    if (this.closed || this.clients.size >= this.opts.maxStreams) {
      ctx.status = 503;
      ctx.body = { ok: false, error: 'too many console streams are open', code: 'UNAVAILABLE' };
      return;
    }
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    ctx.set({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    const client: Client = { out: new PassThrough(), session };
    ctx.status = 200;
    ctx.body = client.out;
    this.clients.add(client);
    // the connection is not reused after a stream: it ends with it
    client.out.once('close', () => {
      this.clients.delete(client);
      if (!this.clients.size) this.stop();
    });
    ctx.res.once('finish', () => ctx.req.socket.end());
    client.out.write(`retry: 3000\n\n`);
    void this.snapshot().then((text) => this.send(client, text));
    this.start();
  }

  /** Ends every stream (the service stops). */
  close(): void {
    this.closed = true;
    this.stop();
    for (const c of this.clients) c.out.end();
    this.clients.clear();
  }

  size(): number {
    return this.clients.size;
  }

  private start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.opts.everyMs);
    this.timer.unref();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Sends `text` to `c` unless it is what `c` was sent last. */
  private send(c: Client, text: string | undefined): boolean {
    if (text === undefined || text === c.last) return false;
    c.last = text;
    c.out.write(frame('stats', text));
    return true;
  }

  private async snapshot(): Promise<string | undefined> {
    try {
      return JSON.stringify(await this.opts.snapshot());
    } catch {
      // a store that cannot be read now: the next tick tries again
      return undefined;
    }
  }

  /** One look at the figures: sends them to every stream when they changed. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const now = this.opts.clock();
      for (const c of this.clients) {
        if (c.session && !(await this.opts.sessions.alive(c.session, now))) {
          c.out.end(frame('signed-out', '{}'));
          this.clients.delete(c);
        }
      }
      if (!this.clients.size) return;
      const text = await this.snapshot();
      this.sinceKeepAlive += this.opts.everyMs;
      const keepAlive = this.sinceKeepAlive >= this.opts.keepAliveMs;
      if (keepAlive) this.sinceKeepAlive = 0;
      for (const c of this.clients) if (!this.send(c, text) && keepAlive) c.out.write(': keep-alive\n\n');
    } finally {
      this.ticking = false;
    }
  }
}

function frame(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}
