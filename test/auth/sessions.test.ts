/**
 * Console sessions (src/auth/sessions.ts): in this process's memory (the sessions SQLite's store
 * gives), and in a store several instances share (here a map with times to live, as the Redis driver
 * keeps them; the driver's own calls are in test/e2e/redis-console-sessions.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { ConsoleSessions } from '../../src/auth/sessions.ts';
import { LocalSessions } from '../../src/store/local/sessions.ts';
import type { Sessions } from '../../src/store/roles.ts';

const LIMITS = { idleMs: 1_000, maxAgeMs: 5_000 };

/** A shared store with times to live on the test's clock. */
function sharedStore(clock: () => number): Sessions & { keys(): string[]; values(): string[] } {
  const kept = new Map<string, { value: string; until: number }>();
  const live = (k: string) => {
    const e = kept.get(k);
    if (e && e.until <= clock()) kept.delete(k);
    return kept.get(k);
  };
  return {
    async put(key, value, ttlMs, onlyIfKept) {
      if (onlyIfKept && !live(key)) return;
      kept.set(key, { value, until: clock() + ttlMs });
    },
    async get(key) {
      return live(key)?.value;
    },
    async delete(key) {
      kept.delete(key);
    },
    keys: () => [...kept.keys()],
    values: () => [...kept.values()].map((e) => e.value),
  };
}

describe('console sessions in memory', () => {
  it('end after their idle time or their maximum age, whichever comes first, and on sign-out', async () => {
    const sessions = new ConsoleSessions({ limits: LIMITS });
    const s = await sessions.create(0, 'fp');
    expect((await sessions.use(s.id, 999))?.csrf).toBe(s.csrf);
    // used at 999: idle until 1,999
    expect(await sessions.use(s.id, 1_998)).toBeDefined();
    for (let t = 2_500; t < 5_000; t += 500) expect(await sessions.use(s.id, t)).toBeDefined();
    expect(await sessions.use(s.id, 5_000)).toBeUndefined();
    const idle = await sessions.create(0, 'fp');
    expect(await sessions.use(idle.id, 1_000)).toBeUndefined();
    const out = await sessions.create(0, 'fp');
    await sessions.end(out.id);
    expect(await sessions.use(out.id, 1)).toBeUndefined();
  });

  it('keep at most maxSessions, dropping the oldest', async () => {
    const sessions = new ConsoleSessions({ limits: LIMITS, sessions: new LocalSessions({ maxSessions: 3 }) });
    const made = [];
    for (let i = 0; i < 4; i++) made.push(await sessions.create(0, 'fp'));
    expect(await sessions.use(made[0]!.id, 1)).toBeUndefined();
    for (const s of made.slice(1)) expect(await sessions.use(s.id, 1)).toBeDefined();
  });

  it('end when the gateway token changes', async () => {
    let current = 'fp-1';
    const sessions = new ConsoleSessions({ limits: LIMITS, currentFingerprint: () => current });
    const s = await sessions.create(0, 'fp-1');
    expect(await sessions.alive(s, 1)).toBe(true);
    current = 'fp-2';
    expect(await sessions.alive(s, 1)).toBe(false);
    expect(await sessions.use(s.id, 1)).toBeUndefined();
    current = 'fp-1';
    expect(await sessions.use(s.id, 1)).toBeUndefined(); // ended, not suspended
  });
});

describe('console sessions shared by several instances', () => {
  it('a session made by one instance is taken by another, and a sign-out on either ends it on both', async () => {
    let now = 0;
    const store = sharedStore(() => now);
    const a = new ConsoleSessions({ limits: LIMITS, sessions: store });
    const b = new ConsoleSessions({ limits: LIMITS, sessions: store });
    const s = await a.create(now, 'fp');
    now = 500;
    expect(await b.use(s.id, now)).toEqual({ ...s, lastUsedAt: 500 });
    // the use on b restarted the idle time for a too
    now = 1_400;
    expect(await a.alive(s, now)).toBe(true);
    await b.end(s.id);
    expect(await a.use(s.id, now)).toBeUndefined();
    expect(await a.alive(s, now)).toBe(false);
  });

  it('a use does not bring back a session signed out on another instance while it was under way', async () => {
    const store = sharedStore(() => 0);
    let signOut: (() => Promise<void>) | undefined;
    // instance a reads the session, then b signs it out before a writes its new idle time back
    const racing: Sessions = {
      ...store,
      async get(key) {
        const value = await store.get(key);
        await signOut?.();
        return value;
      },
    };
    const a = new ConsoleSessions({ limits: LIMITS, sessions: racing });
    const b = new ConsoleSessions({ limits: LIMITS, sessions: store });
    const s = await a.create(0, 'fp');
    signOut = () => b.end(s.id);
    await a.use(s.id, 10);
    signOut = undefined;
    expect(store.keys()).toEqual([]);
    expect(await b.use(s.id, 20)).toBeUndefined();
  });

  it('keep neither the session id nor anything that gives it, and expire in the store with the session', async () => {
    let now = 0;
    const store = sharedStore(() => now);
    const a = new ConsoleSessions({ limits: LIMITS, sessions: store });
    const s = await a.create(now, 'fp');
    expect(store.keys().join()).not.toContain(s.id);
    expect(store.values().join()).not.toContain(s.id);
    now = 1_000; // idle time over: the store has let it go
    expect(store.keys()).toHaveLength(1);
    expect(await store.get(store.keys()[0]!)).toBeUndefined();
  });
});
