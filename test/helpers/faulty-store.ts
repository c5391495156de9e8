/**
 * A store driver that fails on demand, as any driver must fail: with the storage contract's own errors
 * (src/store/errors.ts), whatever its insides. It keeps its records in a SQLite store in memory and, while
 * told to fail, answers the calls of the roles named with the error given instead, touching nothing.
 * Tests of what the service answers when its storage is down use it, so that the answers follow the
 * contract, not one driver's error shapes.
 */
import { StorageUnavailableError } from '../../src/store/errors.ts';
import type { Store } from '../../src/store/roles.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';

type RoleName = 'records' | 'runs' | 'tasks' | 'counters' | 'sessions' | 'requests';
const ROLES: readonly RoleName[] = ['records', 'runs', 'tasks', 'counters', 'sessions', 'requests'];
/** Methods that answer at once, from what the process holds: they do not fail. */
const SYNC = new Set(['size']);

export interface FaultyStore extends Store {
  /** The store the roles keep their records in while they work. */
  readonly inner: SqliteStore;
  /** From now on, the calls of `roles` (all of them when absent) reject with `error`; `heal()` ends it. */
  fail(error?: Error, roles?: readonly RoleName[]): void;
  heal(): void;
  /** How many calls were refused so far. */
  refused(): number;
  /**
   * From now on, the calls of `roles` (only the `methods` named, when given) wait, as on a server that
   * holds writes; `release()` makes them (each then lands late, as a write sent to such a server does)
   * and ends the hold, and resolves with how each of them settled.
   */
  hold(roles?: readonly RoleName[], methods?: readonly string[]): void;
  release(): Promise<PromiseSettledResult<unknown>[]>;
}

export function faultyStore(): FaultyStore {
  const inner = new SqliteStore({ path: ':memory:' });
  let failing: { error: Error; roles: ReadonlySet<RoleName> } | undefined;
  let refused = 0;
  let held: { roles: ReadonlySet<RoleName>; methods: readonly string[] | undefined; calls: (() => Promise<unknown>)[] } | undefined;
  const role = <T extends object>(name: RoleName, part: T): T => {
    const out: Record<string, unknown> = {};
    for (const m of methodNames(part)) {
      const method = (part as Record<string, (...a: unknown[]) => unknown>)[m]!;
      out[m] = SYNC.has(m)
        ? method.bind(part)
        : (...args: unknown[]) => {
            if (failing?.roles.has(name)) {
              refused++;
              return Promise.reject(failing.error);
            }
            if (held?.roles.has(name) && (!held.methods || held.methods.includes(m))) {
              const calls = held.calls;
              return new Promise((resolve, reject) =>
                calls.push(() => {
                  const p = Promise.resolve(method.apply(part, args));
                  p.then(resolve, reject);
                  return p;
                }),
              );
            }
            return method.apply(part, args);
          };
    }
    return out as T;
  };
  return {
    inner,
    driver: 'faulty',
    capabilities: inner.capabilities,
    records: role('records', inner.records),
    runs: role('runs', inner.runs),
    tasks: role('tasks', inner.tasks),
    counters: role('counters', inner.counters),
    sessions: role('sessions', inner.sessions),
    requests: role('requests', inner.requests),
    ends: inner.ends,
    pollTakeovers: (onWork) => inner.pollTakeovers(onWork),
    startupWarnings: () => inner.startupWarnings(),
    histograms: () => inner.histograms(),
    close: () => inner.close(),
    fail(error = new StorageUnavailableError('the test says so'), roles = ROLES) {
      failing = { error, roles: new Set(roles) };
    },
    heal() {
      failing = undefined;
    },
    refused: () => refused,
    hold(roles = ROLES, methods) {
      held = { roles: new Set(roles), methods, calls: [] };
    },
    release() {
      const calls = held?.calls ?? [];
      held = undefined;
      return Promise.allSettled(calls.map((c) => c()));
    },
  };
}

/** The methods of `o`'s classes, up to Object's own. */
function methodNames(o: object): string[] {
  const names = new Set<string>();
  for (let p = Object.getPrototypeOf(o); p && p !== Object.prototype; p = Object.getPrototypeOf(p))
    for (const name of Object.getOwnPropertyNames(p))
      if (name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(p, name)?.value === 'function') names.add(name);
  return [...names];
}
