/**
 * The running service: store, current generation (with hot reload), runtime
 * (runner, heartbeat, outbox, dispatcher) and the HTTP server, started and
 * stopped in the right order. `serve` and the end-to-end tests use this.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { LoadedConfig } from './config/load.ts';
import type { Plugin } from './plugins/define.ts';
import { builtinPlugins } from '../plugins/index.ts';
import { buildGeneration, GenerationRef, type Generation } from './runtime/generation.ts';
import { openStore } from './store/index.ts';
import type { SharedCounter, Store } from './store/types.ts';
import { createRunner, type Runner } from './runtime/runner.ts';
import { createHeartbeat, type Heartbeat } from './runtime/heartbeat.ts';
import { createOutbox, type Outbox } from './runtime/outbox.ts';
import { createDispatcher } from './runtime/dispatcher.ts';
import { createReloader, type Reloader } from './runtime/reload.ts';
import { createSubmit } from './runtime/submit.ts';
import type { Submit } from './runtime/instances.ts';
import { createListener } from './http/app.ts';
import { Drain, guardRequests, handleClientErrors } from './http/connection.ts';
import { FailureThrottle } from './auth/throttle.ts';
import { IdempotencyGuard } from './http/idempotency.ts';
import { createNamedResolver } from './mapping/resolve.ts';
import { watchSources, type SourceWatcher } from './config/watch.ts';
import { createWorkerSource, type SpareWorkerSource } from './transforms/pool.ts';
import { createMetrics, RequestTally } from './http/metrics.ts';
import { settlesWithin } from './util/deadline.ts';
import { createRetention, type Retention } from './runtime/retention.ts';

export interface ServiceOptions {
  /** Loads (and re-loads, on change) the config. Throws `ConfigError`. */
  load: () => LoadedConfig;
  /** The config already loaded for this start (saves loading it twice). */
  initial?: LoadedConfig;
  logger: Logger;
  /** Overrides of `gateway.port` / `gateway.bind` (`--port`, `--bind`). */
  port?: number | undefined;
  bind?: string | undefined;
  clock?: () => number;
  fetch?: typeof fetch;
  env?: Record<string, string | undefined>;
  /** Watch the config, transforms, presets and plugins and reload on change (default true). */
  watch?: boolean;
  builtins?: readonly Plugin[];
  presetsDir?: string;
}

export interface Service {
  readonly url: string;
  readonly port: number;
  readonly host: string;
  readonly server: Server;
  readonly store: Store;
  readonly generations: GenerationRef;
  readonly runner: Runner;
  readonly heartbeat: Heartbeat;
  readonly outbox: Outbox;
  readonly reloader: Reloader;
  readonly retention: Retention;
  stop(): Promise<void>;
}

const IDEMPOTENCY_PRUNE_MS = 10 * 60 * 1000;

/**
 * The runner's, outbox's and heartbeat's logger. Their lines carry ids,
 * statuses, counts and reasons already cut and cleaned by the code that made
 * them (never config, headers, prompts or payloads), so they skip the wildcard
 * redaction, which costs more than writing the line; test/e2e/secrets.test.ts
 * searches all output for every secret.
 */
function runtimeLogger(logger: Logger, component: string): Logger {
  return logger.child({ component }, { redact: [] });
}

/** Process memory in MB, for /api/status. */
function memoryFigures(): Record<string, number> {
  const m = process.memoryUsage();
  const mb = (n: number) => Math.round((n / 1048576) * 10) / 10;
  return { rssMb: mb(m.rss), heapUsedMb: mb(m.heapUsed), heapTotalMb: mb(m.heapTotal), externalMb: mb(m.external), arrayBuffersMb: mb(m.arrayBuffers) };
}
/** The serving configuration's transform pool for /api/status, with the idle workers kept for the next reload. */
function transformStatus(gen: Generation, workers: SpareWorkerSource | undefined): Record<string, number> | null {
  const stats = gen.transforms?.stats();
  return stats ? { ...stats, spareWorkers: workers?.spares() ?? 0 } : null;
}
const CONNECTIONS_CHECK_MS = 1000;
/** Keys a running service cannot apply without a restart. */
const RESTART_KEYS = ['gateway.bind', 'gateway.port', 'storage.driver', 'storage.path', 'storage.synchronous', 'storage.locking'] as const;

function at(config: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), config);
}

export async function startService(opts: ServiceOptions): Promise<Service> {
  const { logger } = opts;
  const clock = opts.clock ?? Date.now;
  // idle transform workers make reloads fast; only worth keeping when reloads can happen
  const workers = opts.watch !== false ? createWorkerSource(1) : undefined;
  // plugin instances reach the dispatcher once it exists (they are started after that)
  let submit: Submit | undefined;
  const build = async (loaded: LoadedConfig = opts.load(), previous?: Generation): Promise<Generation> =>
    buildGeneration(loaded, {
      previous,
      submit: (held, actions) => (submit ? submit(held, actions) : Promise.reject(new Error('the service is not started'))),
      ...(workers ? { workers } : {}),
      clock,
      logger,
      builtins: opts.builtins ?? builtinPlugins,
      ...(opts.presetsDir ? { presetsDir: opts.presetsDir } : {}),
      ...(opts.fetch ? { fetch: opts.fetch } : {}),
      ...(opts.env ? { env: opts.env } : {}),
    });

  let first: Generation;
  try {
    first = await build(opts.initial);
  } catch (err) {
    await workers?.close();
    throw err;
  }
  for (const w of first.warnings) logger.warn(w);
  const generations = new GenerationRef(first);
  const cfg = first.config;

  let store: Store;
  try {
    store = await openStore(cfg.storage, { clock });
  } catch (err) {
    await first.dispose();
    await workers?.close();
    throw err;
  }
  for (const w of (await store.startupWarnings?.().catch(() => [])) ?? []) logger.warn(w);
  let outbox: Outbox | undefined;
  let heartbeat: Heartbeat | undefined;
  const runner = createRunner({
    store,
    queue: store.queue,
    generations,
    logger: runtimeLogger(logger, 'runner'),
    clock,
    requestHeartbeat: () => heartbeat?.request(),
    notifyOutbox: (entry) => outbox?.notify(entry),
  });
  outbox = createOutbox({ store, generations, logger: runtimeLogger(logger, 'outbox'), clock });
  heartbeat = createHeartbeat({ store, generations, logger: runtimeLogger(logger, 'heartbeat'), clock, notifyOutbox: (entry) => outbox.notify(entry) });
  const dispatcher = createDispatcher({
    store,
    clock,
    runsAccepted: () => runner.notify(),
    queuedRuns: () => runner.queued(),
    requestHeartbeat: () => heartbeat.request(),
  });
  submit = createSubmit(generations, dispatcher);

  const recovered = await runner.recover();
  if (recovered.queued || recovered.heartbeats) logger.info(recovered, 'recovered unfinished runs');

  // on a store several instances share, failure counts and rate-limit windows are shared too
  const counter: SharedCounter | undefined =
    store.countInWindow && store.resetCount ? { countInWindow: store.countInWindow.bind(store), resetCount: store.resetCount.bind(store) } : undefined;
  const throttle = new FailureThrottle({
    max: cfg.hooks.authFailures.max,
    windowMs: cfg.hooks.authFailures.windowSeconds * 1000,
    ...(counter ? { shared: counter } : {}),
  });
  let watcher: SourceWatcher | undefined;
  const reloader = createReloader({
    generations,
    build: () => build(undefined, generations.current),
    logger: logger.child({ component: 'reload' }),
    clock,
    onSwap: (prev, next) => {
      const c = next.config;
      throttle.configure({ max: c.hooks.authFailures.max, windowMs: c.hooks.authFailures.windowSeconds * 1000 });
      if (c.agents.defaults.heartbeat.every !== prev.config.agents.defaults.heartbeat.every) heartbeat.start();
      for (const k of RESTART_KEYS)
        if (JSON.stringify(at(c, k)) !== JSON.stringify(at(cfg, k))) logger.warn({ key: k }, 'this setting changes only after a restart');
      for (const w of next.warnings) logger.warn(w);
      watcher?.update(next.sources);
      workers?.standby(next.transforms !== undefined);
    },
  });

  let stopping = false;
  let listening = false;
  const tally = new RequestTally();
  const metrics = createMetrics({ tally, store, generations, runner: () => ({ queued: runner.queued(), running: runner.running() }), reloadFailures: () => reloader.failures() });
  const startedAt = clock();
  const listener = createListener({
    generations,
    dispatcher,
    idempotency: new IdempotencyGuard(store),
    throttle,
    logger,
    clock,
    named: createNamedResolver({ logger, ...(counter ? { counter } : {}) }),
    tally,
    metrics: async () => ({ contentType: metrics.contentType, body: await metrics.metrics() }),
    store,
    admin: { runsAccepted: () => runner.notify(), queuedRuns: () => runner.queued(), notifyOutbox: (entry) => outbox.notify(entry) },
    ready: () => listening && !stopping,
    status: () => ({
      uptimeSeconds: Math.round((clock() - startedAt) / 1000),
      memory: memoryFigures(),
      runner: { queued: runner.queued(), running: runner.running() },
      transforms: transformStatus(generations.current, workers),
      storage: { driver: store.driver },
    }),
  });

  const requestTimeout = cfg.hooks.bodyTimeoutMs + 5000; // our own 408 answers first
  const drain = new Drain();
  const onRequest = guardRequests(listener, logger, drain);
  const server = createServer(
    {
      ServerResponse: drain.Response,
      requestTimeout,
      headersTimeout: Math.min(60_000, requestTimeout),
      // how often both timeouts are checked: with Node's default (30 s) slow headers could hold a connection for 30 s past the limit
      connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
      requireHostHeader: false, // guardRequests refuses a missing Host with the JSON error shape
    },
    onRequest,
  );
  // Expect: 100-continue goes to the app like any request: it sends 100 Continue only when it reads the body
  server.on('checkContinue', onRequest);
  handleClientErrors(server, logger);
  const host = opts.bind ?? cfg.gateway.bind;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? cfg.gateway.port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await store.close();
    await generations.disposeAll();
    await workers?.close();
    throw err;
  }
  listening = true;
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;

  heartbeat.start();
  outbox.start();
  // on a store other instances share: take over what one of them left when it stopped
  const unwatch = store.shared?.(() => {
    runner.notify();
    heartbeat.poll();
    outbox.notify();
  });
  await first.start();
  // started once the service answers, so it costs the start nothing; the first save then finds it ready
  workers?.standby(first.transforms !== undefined);
  if (opts.watch !== false) {
    watcher = watchSources(
      first.sources,
      (paths) => void reloader.reload(`changed: ${paths.slice(0, 3).join(', ')}${paths.length > 3 ? ', …' : ''}`),
      cfg.hooks.reloadDebounceMs,
      () => workers?.prepare(),
    );
  }
  const prune = setInterval(() => {
    store.pruneIdempotency(clock()).catch((err) => logger.warn({ err }, 'idempotency prune failed'));
  }, IDEMPOTENCY_PRUNE_MS);
  prune.unref();
  const retention = createRetention({ store, generations, logger: runtimeLogger(logger, 'retention'), clock });
  retention.start();

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      stopping = true;
      // one budget for the whole shutdown (wall time: the injected clock may be a test's)
      const deadline = Date.now() + generations.current.config.gateway.shutdownTimeoutSeconds * 1000;
      const left = () => Math.max(0, deadline - Date.now());
      // stop intake first: no new connections; idle keep-alive ones close now, busy ones after their
      // answer (which says `Connection: close`); a request arriving on one meanwhile is refused
      drain.begin();
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      clearInterval(prune);
      unwatch?.();
      await retention.stop();
      await watcher?.close();
      const intake = settlesWithin(closed, left()).then(() => server.closeAllConnections());
      // meanwhile no run or heartbeat starts; the ones running may finish within the budget
      await Promise.all([intake, runner.stop(left()), heartbeat.stop(left())]);
      // replies of runs that just finished go out if there is time left; the rest stays in the outbox
      await outbox.stop(left());
      // plugin instances stop (a service may still be storing) before the store closes, within what is left of the budget
      // what is still stopping then is left behind
      const disposed = generations.disposeAll().catch((err) => logger.error({ err }, 'stopping plugin instances failed'));
      if (!(await settlesWithin(disposed, left()))) logger.warn('plugin instances did not stop within the shutdown timeout');
      await store.close();
      await workers?.close();
      logger.info('stopped');
    })());

  return { url: `http://${shownHost}:${addr.port}`, port: addr.port, host: addr.address, server, store, generations, runner, heartbeat, outbox, reloader, retention, stop };
}
