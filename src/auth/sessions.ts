/**
 * The console's sign-in sessions: the gateway token is exchanged once for a
 * random session id, sent back in an `HttpOnly`, `SameSite=Strict` cookie, and
 * a second random value, the CSRF token, that the page sends in a header with
 * every state-changing call.
 *
 * A session belongs to the gateway token it was signed in with: once the token
 * changes, it ends. Sessions live in the store's sessions (`Store.sessions`),
 * keyed by a hash of the session id: on SQLite in the process's memory (a
 * restart ends them), on Redis on the server the instances share, so a browser
 * may reach any instance and a sign-out on one ends the session on all.
 */
import { createHash, randomBytes } from 'node:crypto';
import { LocalSessions } from '../store/local/sessions.ts';
import type { Sessions } from '../store/roles.ts';

export const SESSION_COOKIE = 'hook_intake_session';
export const CSRF_HEADER = 'x-csrf-token';

export interface SessionLimits {
  /** A session unused for this long ends. */
  idleMs: number;
  /** A session ends this long after sign-in, however much it is used. */
  maxAgeMs: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { idleMs: 60 * 60 * 1000, maxAgeMs: 12 * 60 * 60 * 1000 };

export interface ConsoleSession {
  id: string;
  csrf: string;
  /** The fingerprint of the token it was signed in with (src/auth/token.ts `tokenFingerprint`): the admin log's, and the session's end when the token changes. */
  fingerprint: string;
  createdAt: number;
  lastUsedAt: number;
}

export interface SessionOptions {
  limits?: Partial<SessionLimits>;
  /** Where sessions live: the store's (`Store.sessions`); sessions of its own, in memory, when absent. */
  sessions?: Sessions;
  /** The fingerprint of the gateway token serving now: a session signed in with another one has ended. */
  currentFingerprint?: () => string;
}

/** The store's key of a session: a hash, so that reading the store does not give a usable cookie. */
const sessionKey = (id: string) => createHash('sha256').update(id).digest('base64url');

export class ConsoleSessions {
  private readonly limits: SessionLimits;
  private readonly kept: Sessions;
  private readonly currentFingerprint: (() => string) | undefined;

  constructor(opts: SessionOptions = {}) {
    this.limits = { ...DEFAULT_SESSION_LIMITS, ...opts.limits };
    this.kept = opts.sessions ?? new LocalSessions();
    this.currentFingerprint = opts.currentFingerprint;
  }

  async create(now: number, fingerprint: string): Promise<ConsoleSession> {
    const s: ConsoleSession = {
      id: randomBytes(32).toString('base64url'),
      csrf: randomBytes(24).toString('base64url'),
      fingerprint,
      createdAt: now,
      lastUsedAt: now,
    };
    await this.save(s, now, false);
    return s;
  }

  /** The live session of `id`, its idle time restarted; undefined (and forgotten) when it has ended. */
  async use(id: string, now: number): Promise<ConsoleSession | undefined> {
    const s = await this.find(id);
    if (!s || !this.live(s, now)) {
      await this.end(id);
      return undefined;
    }
    s.lastUsedAt = now;
    await this.save(s, now, true);
    return s;
  }

  /** When `s` expires if unused from now on. */
  expiresAt(s: ConsoleSession): number {
    return Math.min(s.lastUsedAt + this.limits.idleMs, s.createdAt + this.limits.maxAgeMs);
  }

  /** True while `s` has not expired or ended (without counting as a use). */
  async alive(s: ConsoleSession, now: number): Promise<boolean> {
    const kept = await this.find(s.id);
    return kept !== undefined && this.live(kept, now);
  }

  async end(id: string): Promise<void> {
    await this.kept.delete(sessionKey(id));
  }

  private live(s: ConsoleSession, now: number): boolean {
    if (now >= this.expiresAt(s)) return false;
    return this.currentFingerprint === undefined || s.fingerprint === this.currentFingerprint();
  }

  private async find(id: string): Promise<ConsoleSession | undefined> {
    const value = await this.kept.get(sessionKey(id));
    if (value === undefined) return undefined;
    const { csrf, fingerprint, createdAt, lastUsedAt } = JSON.parse(value) as Omit<ConsoleSession, 'id'>;
    return { id, csrf, fingerprint, createdAt, lastUsedAt };
  }

  private async save(s: ConsoleSession, now: number, onlyIfKept: boolean): Promise<void> {
    const { csrf, fingerprint, createdAt, lastUsedAt } = s;
    await this.kept.put(
      sessionKey(s.id),
      JSON.stringify({ csrf, fingerprint, createdAt, lastUsedAt }),
      Math.max(1, this.expiresAt(s) - now),
      onlyIfKept,
    );
  }
}

/** The value of cookie `name` in a `Cookie` header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim() || undefined;
  }
  return undefined;
}
