/**
 * The service's HTTP side: the request listener of every route with the figures it serves, and the
 * server around it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Config } from '../config/schema.ts';
import type { Logger } from 'pino';
import type { GenerationRef } from '../generation/ref.ts';
import type { Generation } from '../generation/types.ts';
import type { Store } from '../store/roles.ts';
import type { Reloader } from '../generation/reload.ts';
import { createListener } from '../http/app.ts';
import { Drain, guardRequests, handleClientErrors } from '../http/connection.ts';
import type { FailureThrottle } from '../auth/throttle.ts';
import { IdempotencyGuard } from '../intake/idempotency.ts';
import { Intake } from '../intake/pipeline.ts';
import { RefusalLog } from '../intake/refusals.ts';
import { createRateLimiter } from '../intake/rate-limit.ts';
import type { SpareWorkerSource } from '../transforms/pool.ts';
import { createMetrics, RequestTally } from '../http/metrics.ts';
import type { ConsoleSessions } from '../auth/sessions.ts';
import { ConsoleFeed } from '../http/stream.ts';
import { consoleStats } from '../http/ui-api.ts';
import type { Runtime } from './runtime.ts';
import { RejectionEvents } from '../callbacks/rejections.ts';

/** Process memory in MB, for /api/status. */
function memoryFigures(): Record<string, number> {
  const m = process.memoryUsage();
  const mb = (n: number) => Math.round((n / 1048576) * 10) / 10;
  return {
    rssMb: mb(m.rss),
    heapUsedMb: mb(m.heapUsed),
    heapTotalMb: mb(m.heapTotal),
    externalMb: mb(m.external),
    arrayBuffersMb: mb(m.arrayBuffers),
  };
}
/** The serving configuration's transform pool for /api/status, with the idle workers kept for the next reload. */
function transformStatus(gen: Generation, workers: SpareWorkerSource | undefined): Record<string, number> | null {
  const stats = gen.transforms?.stats();
  return stats ? { ...stats, spareWorkers: workers?.spares() ?? 0 } : null;
}

// how often the server checks its request and header timeouts
const CONNECTIONS_CHECK_MS = 1000;

/** The HTTP server around `listener`, with its timeouts, the drain that stops it, and client errors handled. */
export function createHttpServer(cfg: Config, listener: (req: IncomingMessage, res: ServerResponse) => void, logger: Logger) {
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
  drain.attach(server);
  return { server, drain };
}

export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export interface AppParts {
  store: Store;
  generations: GenerationRef;
  runtime: Runtime;
  reloader: Reloader;
  throttle: FailureThrottle;
  sessions: ConsoleSessions;
  workers: SpareWorkerSource | undefined;
  logger: Logger;
  clock: () => number;
  ready: () => boolean;
}

/** The request listener of every route, with the figures it serves (metrics, status, the console's feed). */
export function createApp(p: AppParts) {
  const { store, generations, runtime, clock } = p;
  const { runner, outbox } = runtime;
  const tally = new RequestTally(clock);
  const runnerFigures = () => ({ queued: runner.queued(), running: runner.running() });
  const metrics = createMetrics({
    tally,
    tokens: runtime.tokens,
    store,
    generations,
    runner: runnerFigures,
    reloadFailures: () => p.reloader.failures(),
  });
  const feed = new ConsoleFeed({
    snapshot: () => consoleStats({ generations, store, clock, tally, runner: runnerFigures }),
    sessions: p.sessions,
    clock,
  });
  const startedAt = clock();
  const listener = createListener({
    generations,
    intake: new Intake({
      dispatcher: runtime.dispatcher,
      idempotency: new IdempotencyGuard(store.records),
      rateLimiter: createRateLimiter(store.counters),
      logger: p.logger,
    }),
    refusals: new RefusalLog(runtime.dispatcher, p.logger),
    throttle: p.throttle,
    logger: p.logger,
    clock,
    tally,
    rejections: new RejectionEvents({ records: store.records, notifyOutbox: (entry) => outbox.notify(entry), logger: p.logger }),
    sessions: p.sessions,
    feed,
    runner: runnerFigures,
    metrics: async () => ({ contentType: metrics.contentType, body: await metrics.metrics() }),
    store,
    admin: { dispatcher: runtime.dispatcher, notifyOutbox: (entry) => outbox.notify(entry) },
    ready: p.ready,
    status: () => ({
      uptimeSeconds: Math.round((clock() - startedAt) / 1000),
      memory: memoryFigures(),
      runner: runnerFigures(),
      transforms: transformStatus(generations.current, p.workers),
      storage: { driver: store.driver },
    }),
  });
  return { listener, feed };
}
