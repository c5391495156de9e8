/**
 * A runner over an in-memory store with a scripted provider, for the runner
 * tests: runs are added with `add`, answered through `provider.calls`.
 */
import { vi } from 'vitest';
import { GenerationRef } from '../../src/generation/ref.ts';
import { createRunner, type Runner } from '../../src/runtime/runner.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { TokenTally } from '../../src/runtime/tokens.ts';
import type { NewRun } from '../../src/store/types.ts';
import { until } from './cli.ts';
import { captureLogger, newRun, scriptedProvider, testGeneration } from './runtime.ts';

export type Scripted = ReturnType<typeof scriptedProvider>;

export interface Setup {
  store: SqliteStore;
  runner: Runner;
  provider: Scripted;
  heartbeats: ReturnType<typeof vi.fn>;
  outbox: ReturnType<typeof vi.fn>;
  /** The tokens the runner counted for /metrics. */
  tokens: TokenTally;
  add(over?: Partial<NewRun>): Promise<NewRun>;
}

let open: Setup[] = [];
/** Stops every runner made by `setup` and closes its store; call it from `afterEach`. */
export async function closeAll(): Promise<void> {
  for (const s of open) {
    await s.runner.stop(0);
    await s.store.close();
  }
  open = [];
}

export function setup(
  opts: {
    maxConcurrent?: number;
    channels?: Record<string, unknown>;
    defaultRoute?: unknown;
    provider?: Scripted;
    store?: SqliteStore;
  } = {},
): Setup {
  const provider = opts.provider ?? scriptedProvider();
  const gen = testGeneration(
    {
      agents: { defaults: { model: 'sp/m', maxConcurrent: opts.maxConcurrent ?? 4 }, providers: { sp: { type: 'scripted' } } },
      channels: opts.channels ?? { console: {} },
      ...(opts.defaultRoute ? { session: { defaultRoute: opts.defaultRoute } } : {}),
    },
    { plugins: [provider.plugin] },
  );
  const store = opts.store ?? new SqliteStore({ path: ':memory:' });
  const heartbeats = vi.fn();
  const outbox = vi.fn();
  const tokens = new TokenTally();
  const runner = createRunner({
    records: store.records,
    queue: store.runs,
    generations: new GenerationRef(gen),
    logger: captureLogger('silent').logger,
    requestHeartbeat: heartbeats,
    notifyOutbox: outbox,
    tokens,
  });
  const s: Setup = {
    store,
    runner,
    provider,
    heartbeats,
    outbox,
    tokens,
    async add(over = {}) {
      const run = newRun({ model: 'sp/m', ...over });
      await store.records.accept({ events: [], runs: [run] });
      runner.notify();
      return run;
    },
  };
  open.push(s);
  return s;
}

export const finished = async (s: Setup, id: string) =>
  until(async () => {
    const r = await s.store.records.getRun(id);
    return r && ['ok', 'error', 'timeout'].includes(r.status) ? r : undefined;
  });
