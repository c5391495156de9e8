/**
 * The running service: store, current generation (with hot reload), runtime
 * (runner, heartbeat, outbox, dispatcher) and the HTTP server, started and
 * stopped in the right order. `serve` and the end-to-end tests use this.
 */
import type { Server } from 'node:http';
import type { Config } from './config/schema.ts';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { GenerationRef } from './generation/ref.ts';
import type { Generation } from './generation/types.ts';
import type { Store } from './store/roles.ts';
import type { Runner } from './runtime/runner.ts';
import type { Heartbeat } from './runtime/heartbeat.ts';
import type { Outbox } from './runtime/outbox.ts';
import { createReloader, type Reloader } from './generation/reload.ts';
import { createSubmit } from './intake/submit.ts';
import { FailureThrottle } from './auth/throttle.ts';
import type { SourceWatcher } from './config/watch.ts';
import { createWorkerSource, type SpareWorkerSource } from './transforms/pool.ts';
import { ConsoleSessions } from './auth/sessions.ts';
import { tokenFingerprint } from './auth/token.ts';
import type { Retention } from './runtime/retention.ts';
import { createRuntime, firstGenerationAndStore, generationBuilder } from './service/runtime.ts';
import { createApp, createHttpServer, listen } from './service/http.ts';
import { startBackground, stopAll } from './service/lifecycle.ts';
import type { ServiceOptions } from './service/options.ts';

export type { ServiceOptions };

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

/** Keys a running service cannot apply without a restart. */
const RESTART_KEYS = ['gateway.bind', 'gateway.port', 'storage.driver', 'storage.path', 'storage.synchronous', 'storage.locking'] as const;

function at(config: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), config);
}

/** What a swap of generations changes in the running service beside the generation itself. */
function onSwap(
  cfg: Config,
  parts: {
    throttle: FailureThrottle;
    sessions: ConsoleSessions;
    heartbeat: Heartbeat;
    logger: Logger;
    workers: SpareWorkerSource | undefined;
    watcher: () => SourceWatcher | undefined;
  },
) {
  return (prev: Generation, next: Generation): void => {
    const c = next.config;
    parts.throttle.configure({ max: c.hooks.authFailures.max, windowMs: c.hooks.authFailures.windowSeconds * 1000 });
    if (c.agents.defaults.heartbeat.every !== prev.config.agents.defaults.heartbeat.every) parts.heartbeat.start();
    for (const k of RESTART_KEYS)
      if (JSON.stringify(at(c, k)) !== JSON.stringify(at(cfg, k)))
        parts.logger.warn({ key: k }, 'this setting changes only after a restart');
    for (const w of next.warnings) parts.logger.warn(w);
    parts.watcher()?.update(next.sources);
    parts.workers?.standby(next.transforms !== undefined);
  };
}

/** The fingerprint of the gateway token serving now, computed again only when the token changes. */
function fingerprintOf(generations: GenerationRef): () => string {
  let token: string | undefined;
  let fingerprint = '';
  return () => {
    const current = generations.current.config.gateway.auth.token ?? '';
    if (current !== token) {
      token = current;
      fingerprint = tokenFingerprint(current);
    }
    return fingerprint;
  };
}

export async function startService(opts: ServiceOptions): Promise<Service> {
  const { logger } = opts;
  const clock = opts.clock ?? Date.now;
  // idle transform workers make reloads fast; only worth keeping when reloads can happen
  const workers = opts.watch !== false ? createWorkerSource(1) : undefined;
  const builder = generationBuilder(opts, clock, workers);
  const { first, store } = await firstGenerationAndStore(opts, builder, clock, workers);
  const generations = new GenerationRef(first);
  const cfg = first.config;
  const runtime = createRuntime(store, generations, logger, clock);
  const { runner, outbox, heartbeat } = runtime;
  builder.connect(createSubmit(generations, runtime.dispatcher));

  const recovered = await runner.recover();
  if (recovered.queued || recovered.heartbeats) logger.info(recovered, 'recovered unfinished runs');

  // failure counts and rate-limit windows in the store's counters (on Redis, the service's)
  const throttle = new FailureThrottle({
    max: cfg.hooks.authFailures.max,
    windowMs: cfg.hooks.authFailures.windowSeconds * 1000,
    counters: store.counters,
  });
  // a console session ends once the gateway token it was signed in with is no longer the one serving
  const sessions = new ConsoleSessions({ sessions: store.sessions, currentFingerprint: fingerprintOf(generations) });
  let watcher: SourceWatcher | undefined;
  const reloader = createReloader({
    generations,
    build: () => builder.build(undefined, generations.current),
    logger: logger.child({ component: 'reload' }),
    clock,
    onSwap: onSwap(cfg, { throttle, sessions, heartbeat, logger, workers, watcher: () => watcher }),
  });

  const state = { stopping: false, listening: false };
  const { listener, feed, waits } = createApp({
    store,
    generations,
    runtime,
    reloader,
    throttle,
    sessions,
    workers,
    logger,
    clock,
    ready: () => state.listening && !state.stopping,
  });
  const { server, drain } = createHttpServer(cfg, listener, logger);
  const host = opts.bind ?? cfg.gateway.bind;
  try {
    await listen(server, opts.port ?? cfg.gateway.port, host);
  } catch (err) {
    await store.close();
    await generations.disposeAll();
    await workers?.close();
    throw err;
  }
  state.listening = true;
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;

  const background = await startBackground({
    store,
    generations,
    runtime,
    reloader,
    first,
    workers,
    logger,
    clock,
    watch: opts.watch !== false,
  });
  watcher = background.watcher;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      state.stopping = true;
      background.stop();
      await stopAll({ server, drain, feed, waits, retention: background.retention, watcher, runtime, generations, store, workers, logger });
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
    reloader,
    retention: background.retention,
    stop,
  };
}
