/**
 * The console's sign-in sessions: the gateway token is exchanged once for a
 * random session id, sent back in an `HttpOnly`, `SameSite=Strict` cookie, and
 * a second random value, the CSRF token, that the page sends in a header with
 * every state-changing call. Sessions live in this process's memory: a
 * restart, a change of the gateway token or sign-out ends them.
 */
import { randomBytes } from 'node:crypto';

export const SESSION_COOKIE = 'hook_intake_session';
export const CSRF_HEADER = 'x-csrf-token';

export interface SessionLimits {
  /** A session unused for this long ends. */
  idleMs: number;
  /** A session ends this long after sign-in, however much it is used. */
  maxAgeMs: number;
  /** At most this many sessions are kept; the oldest is dropped first. */
  maxSessions: number;
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { idleMs: 60 * 60 * 1000, maxAgeMs: 12 * 60 * 60 * 1000, maxSessions: 1000 };

export interface ConsoleSession {
  id: string;
  csrf: string;
  /** The fingerprint of the token it was signed in with, for the admin log (src/auth/token.ts `tokenFingerprint`). */
  fingerprint: string;
  createdAt: number;
  lastUsedAt: number;
}

export class ConsoleSessions {
  private readonly sessions = new Map<string, ConsoleSession>();
  private readonly limits: SessionLimits;

  constructor(limits: Partial<SessionLimits> = {}) {
    this.limits = { ...DEFAULT_SESSION_LIMITS, ...limits };
  }

  create(now: number, fingerprint: string): ConsoleSession {
    const s: ConsoleSession = { id: randomBytes(32).toString('base64url'), csrf: randomBytes(24).toString('base64url'), fingerprint, createdAt: now, lastUsedAt: now };
    this.sessions.set(s.id, s);
    // Map order is sign-in order: the oldest go first
    for (const k of this.sessions.keys()) {
      if (this.sessions.size <= this.limits.maxSessions) break;
      this.sessions.delete(k);
    }
    return s;
  }

  /** The live session of `id`, its idle time restarted; undefined (and forgotten) when it has expired. */
  use(id: string, now: number): ConsoleSession | undefined {
    const s = this.sessions.get(id);
    if (!s) return undefined;
    if (now - s.lastUsedAt >= this.limits.idleMs || now - s.createdAt >= this.limits.maxAgeMs) {
      this.sessions.delete(id);
      return undefined;
    }
    s.lastUsedAt = now;
    return s;
  }

  /** When `s` expires if unused from now on. */
  expiresAt(s: ConsoleSession): number {
    return Math.min(s.lastUsedAt + this.limits.idleMs, s.createdAt + this.limits.maxAgeMs);
  }

  /** True while `s` has not expired or ended (without counting as a use). */
  alive(s: ConsoleSession, now: number): boolean {
    return this.sessions.get(s.id) === s && now < this.expiresAt(s);
  }

  end(id: string): void {
    this.sessions.delete(id);
  }

  /** Ends every session (the gateway token changed). */
  clear(): void {
    this.sessions.clear();
  }

  size(): number {
    return this.sessions.size;
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
