/**
 * The running service: store, plugin registry, current generation, runtime
 * (runner, heartbeat, outbox, dispatcher) and the HTTP server, started and
 * stopped in the right order. `serve` and the end-to-end tests use this.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { LoadedConfig } from './config/load.ts';
import { createRegistry, type Registry } from './plugins/registry.ts';
import { builtinPlugins } from '../plugins/index.ts';
import { buildGeneration, closeGeneration, GenerationRef, type BuildDeps } from './runtime/generation.ts';
import { SqliteStore } from './store/sqlite.ts';
import type { Store } from './store/types.ts';
import { createRunner, type Runner } from './runtime/runner.ts';
import { createHeartbeat, type Heartbeat } from './runtime/heartbeat.ts';
import { createOutbox, type Outbox } from './runtime/outbox.ts';
import { createDispatcher } from './runtime/dispatcher.ts';
import { createApp } from './http/app.ts';
import { FailureThrottle } from './auth/throttle.ts';
import { IdempotencyGuard } from './http/idempotency.ts';
import type { NamedResolver } from './runtime/intake.ts';

export interface ServiceOptions {
  loaded: LoadedConfig;
  logger: Logger;
  /** Overrides of `gateway.port` / `gateway.bind` (`--port`, `--bind`). */
  port?: number | undefined;
  bind?: string | undefined;
  clock?: () => number;
  fetch?: typeof fetch;
  env?: Record<string, string | undefined>;
  /** Mapping engine hooks (compile + resolve); absent means named hooks are all 404. */
  mapping?: { compile: NonNullable<BuildDeps['compilePipelines']>; resolve: NamedResolver };
  /** Extra plugins to register after the built-ins. */
  registry?: Registry;
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
  stop(): Promise<void>;
}

const IDEMPOTENCY_PRUNE_MS = 10 * 60 * 1000;

export async function startService(opts: ServiceOptions): Promise<Service> {
  const { logger, loaded } = opts;
  const clock = opts.clock ?? Date.now;
  const cfg = loaded.config;

  const registry = opts.registry ?? createRegistry();
  if (!opts.registry) for (const p of builtinPlugins) registry.register(p);

  const gen = buildGeneration(loaded, {
    registry,
    logger,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.mapping ? { compilePipelines: opts.mapping.compile } : {}),
    clock,
  });
  for (const w of gen.warnings) logger.warn(w);
  const generations = new GenerationRef(gen);

  const store = new SqliteStore({ path: cfg.storage.path!, synchronous: cfg.storage.synchronous });
  let outbox: Outbox | undefined;
  let heartbeat: Heartbeat | undefined;
  const runner = createRunner({
    store,
    generations,
    logger: logger.child({ component: 'runner' }),
    clock,
    requestHeartbeat: () => heartbeat?.request(),
    notifyOutbox: () => outbox?.notify(),
  });
  outbox = createOutbox({ store, generations, logger: logger.child({ component: 'outbox' }), clock });
  heartbeat = createHeartbeat({
    store,
    generations,
    logger: logger.child({ component: 'heartbeat' }),
    clock,
    notifyOutbox: () => outbox.notify(),
  });
  const dispatcher = createDispatcher({
    store,
    clock,
    enqueueRuns: (r) => runner.enqueue(r),
    queuedRuns: () => runner.queued(),
    requestHeartbeat: () => heartbeat.request(),
  });

  const recovered = await runner.recover();
  if (recovered.queued || recovered.requeued || recovered.failed || recovered.heartbeats) logger.info(recovered, 'recovered unfinished runs');

  const throttle = new FailureThrottle({ max: cfg.hooks.authFailures.max, windowMs: cfg.hooks.authFailures.windowSeconds * 1000 });
  let stopping = false;
  let listening = false;
  const startedAt = clock();
  const app = createApp({
    generations,
    dispatcher,
    idempotency: new IdempotencyGuard(store),
    throttle,
    logger,
    clock,
    ...(opts.mapping ? { named: opts.mapping.resolve } : {}),
    store,
    ready: () => listening && !stopping,
    status: () => ({
      uptimeSeconds: Math.round((clock() - startedAt) / 1000),
      runner: { queued: runner.queued(), running: runner.running() },
      storage: { driver: store.driver },
    }),
  });

  const server = createServer(app.callback());
  server.requestTimeout = cfg.hooks.bodyTimeoutMs + 5000; // our own 408 answers first
  server.headersTimeout = Math.min(60_000, server.requestTimeout);
  const host = opts.bind ?? cfg.gateway.bind;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? cfg.gateway.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  listening = true;
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;

  heartbeat.start();
  outbox.start();
  const prune = setInterval(() => {
    store.pruneIdempotency(clock()).catch((err) => logger.warn({ err }, 'idempotency prune failed'));
  }, IDEMPOTENCY_PRUNE_MS);
  prune.unref();

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      stopping = true;
      // one budget for the whole shutdown (wall time: the injected clock may be a test's)
      const deadline = Date.now() + generations.current.config.gateway.shutdownTimeoutSeconds * 1000;
      const left = () => Math.max(0, deadline - Date.now());
      clearInterval(prune);
      // stop intake: no new connections; idle keep-alive ones close now, busy ones after their answer
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      let t: NodeJS.Timeout | undefined;
      const intake = Promise.race([closed, new Promise((r) => (t = setTimeout(r, left())))]).then(() => {
        clearTimeout(t);
        server.closeAllConnections();
      });
      // meanwhile no run or heartbeat starts; the ones running may finish within the budget
      await Promise.all([intake, runner.stop(left()), heartbeat.stop(left())]);
      // replies of runs that just finished go out if there is time left; the rest stays in the outbox
      await outbox.stop(left());
      await closeGeneration(generations.current, logger);
      await store.close();
      logger.info('stopped');
    })());

  return {
    url: `http://${shownHost}:${addr.port}`,
    port: addr.port,
    host: addr.address,
    server,
    store,
    generations,
    runner,
    heartbeat,
    outbox,
    stop,
  };
}
