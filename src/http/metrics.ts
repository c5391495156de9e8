/**
 * `GET /metrics` (Prometheus text, gateway token). The request path only
 * bumps a number in a map (`RequestTally.count`); prom-client reads the tally,
 * the store's counts and the runtime figures when it is scraped.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { GenerationRef } from '../generation/ref.ts';
import type { RecordCounts, Store } from '../store/roles.ts';
import type { TokenTally } from '../runtime/tokens.ts';

/** How many minutes of answers by status `RequestTally` keeps for the console's overview. */
export const TALLY_MINUTES = 60;

/** One minute of answers: its start (epoch ms) and the answers by status. */
export interface MinuteTally {
  at: number;
  byStatus: Record<string, number>;
}

/**
 * Requests answered, by hook and status, counted without prom-client on the request path; and
 * the answers of each of the last `TALLY_MINUTES` minutes by status (the console's overview).
 */
export class RequestTally {
  private readonly counts = new Map<string, number>();
  private readonly minutes: { minute: number; byStatus: Map<number, number> }[] = [];
  private readonly clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.clock = clock;
  }

  count(hook: string | undefined, status: number): void {
    const key = `${hook ?? ''}\u0000${status}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    const minute = Math.floor(this.clock() / 60_000);
    let last = this.minutes[this.minutes.length - 1];
    // a clock that steps back counts into the newest minute
    if (!last || minute > last.minute) {
      last = { minute, byStatus: new Map() };
      this.minutes.push(last);
      if (this.minutes.length > TALLY_MINUTES) this.minutes.shift();
    }
    last.byStatus.set(status, (last.byStatus.get(status) ?? 0) + 1);
  }

  /** The last `TALLY_MINUTES` minutes up to `now`'s, oldest first, minutes without answers included. */
  perMinute(now: number): MinuteTally[] {
    const current = Math.floor(now / 60_000);
    const seen = new Map(this.minutes.map((m) => [m.minute, m.byStatus]));
    const out: MinuteTally[] = [];
    for (let m = current - TALLY_MINUTES + 1; m <= current; m++) {
      const byStatus: Record<string, number> = {};
      for (const [status, n] of seen.get(m) ?? []) byStatus[status] = n;
      out.push({ at: m * 60_000, byStatus });
    }
    return out;
  }

  entries(): { hook: string; status: string; n: number }[] {
    return [...this.counts].map(([k, n]) => {
      const [hook, status] = k.split('\u0000') as [string, string];
      return { hook, status, n };
    });
  }
}

export interface MetricsDeps {
  tally: RequestTally;
  /** The tokens of the runs this process finished. */
  tokens?: TokenTally;
  /** The counts of the records, and the driver's own figures. */
  store: { readonly records: RecordCounts } & Pick<Store, 'histograms'>;
  generations: GenerationRef;
  runner: () => { queued: number; running: number };
  reloadFailures: () => number;
}

export function createMetrics(deps: MetricsDeps): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'hook_intake_' });

  new Counter({
    name: 'hook_intake_requests_total',
    help: 'Requests answered under the hooks prefix, by hook name and status (hook is empty before a name was read).',
    labelNames: ['hook', 'status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const e of deps.tally.entries()) this.inc({ hook: e.hook, status: e.status }, e.n);
    },
  });
  new Counter({
    name: 'hook_intake_tokens_total',
    help: 'Tokens of the runs and heartbeats this process finished, as their providers reported them, by agent, model and direction (input, output).',
    labelNames: ['agent', 'model', 'direction'],
    registers: [registry],
    collect() {
      this.reset();
      for (const c of deps.tokens?.entries() ?? []) {
        this.inc({ agent: c.agent, model: c.model, direction: 'input' }, c.inputTokens);
        this.inc({ agent: c.agent, model: c.model, direction: 'output' }, c.outputTokens);
      }
    },
  });
  const gauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge) => Promise<void> | void) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        this.reset();
        await fill(this);
      },
    });
  gauge('hook_intake_runs', 'Stored agent runs and heartbeats by status.', ['status'], async (g) => {
    const c = await deps.store.records.counts();
    for (const [status, n] of Object.entries(c.runs)) g.set({ status }, n);
  });
  gauge('hook_intake_events', 'System events of the main session by status.', ['status'], async (g) => {
    const c = await deps.store.records.counts();
    for (const [status, n] of Object.entries(c.events)) g.set({ status }, n);
  });
  gauge('hook_intake_deliveries', 'Outbox entries by status.', ['status'], async (g) => {
    const c = await deps.store.records.counts();
    for (const [status, n] of Object.entries(c.outbox)) g.set({ status }, n);
  });
  gauge('hook_intake_runner', 'Runs waiting in the queue and runs executing now.', ['state'], (g) => {
    const r = deps.runner();
    g.set({ state: 'queued' }, r.queued);
    g.set({ state: 'running' }, r.running);
  });
  gauge(
    'hook_intake_transform_pool',
    "The serving configuration's transform pool (absent without transforms): workers, busy workers, calls waiting, and since that configuration went live, workers replaced (restarts) and times the pool grew (scaled_up).",
    ['stat'],
    (g) => {
      const t = deps.generations.current.transforms?.stats();
      if (!t) return;
      g.set({ stat: 'workers' }, t.workers);
      g.set({ stat: 'busy' }, t.busy);
      g.set({ stat: 'queued' }, t.queued);
      g.set({ stat: 'restarts' }, t.restarts);
      g.set({ stat: 'scaled_up' }, t.scaledUp);
    },
  );
  gauge('hook_intake_generation', 'Id of the configuration generation serving requests.', [], (g) => g.set(deps.generations.current.id));
  gauge('hook_intake_reload_failed', '1 while the last reload failed and an older configuration is serving.', [], (g) =>
    g.set(deps.generations.lastReloadError ? 1 : 0),
  );
  new Counter({
    name: 'hook_intake_reload_failures_total',
    help: 'Reloads that failed (the last good configuration kept serving).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(deps.reloadFailures());
    },
  });
  // the store driver's own figures (the SQLite driver's group commits)
  for (const h of deps.store.histograms()) {
    const histogram = new Histogram({ name: h.name, help: h.help, buckets: h.buckets, registers: [registry] });
    h.observe((v) => histogram.observe(v));
  }
  return registry;
}
