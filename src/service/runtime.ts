/**
 * The service's parts before it listens: generations built with the service's options, the first
 * one and its store, and the runtime (runner, outbox, heartbeat, dispatcher) wired together.
 */
import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/load.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { buildGeneration } from '../generation/build.ts';
import type { GenerationRef } from '../generation/ref.ts';
import type { Generation } from '../generation/types.ts';
import { openStore } from '../store/index.ts';
import type { Store } from '../store/roles.ts';
import { createRunner } from '../runtime/runner.ts';
import { createHeartbeat, type Heartbeat } from '../runtime/heartbeat.ts';
import { createOutbox, type Outbox } from '../runtime/outbox.ts';
import { TokenTally } from '../runtime/tokens.ts';
import { createDispatcher } from '../intake/dispatch.ts';
import type { Submit } from '../generation/instances.ts';
import type { SpareWorkerSource } from '../transforms/pool.ts';
import type { ServiceOptions } from './options.ts';

/**
 * The runner's, outbox's and heartbeat's logger. Their lines carry ids,
 * statuses, counts and reasons already cut and cleaned by the code that made
 * them (never config, headers, prompts or payloads), so they skip the wildcard
 * redaction, which costs more than writing the line; test/e2e/secrets.test.ts
 * searches all output for every secret.
 */
export function runtimeLogger(logger: Logger, component: string): Logger {
  return logger.child({ component }, { redact: [] });
}

/** Builds generations; plugin instances reach the dispatcher through `connect`, once it exists (they are started after that). */
export function generationBuilder(opts: ServiceOptions, clock: () => number, workers: SpareWorkerSource | undefined) {
  let submit: Submit | undefined;
  return {
    build: (loaded: LoadedConfig = opts.load(), previous?: Generation): Promise<Generation> =>
      buildGeneration(loaded, {
        previous,
        submit: (held, actions) => (submit ? submit(held, actions) : Promise.reject(new Error('the service is not started'))),
        ...(workers ? { workers } : {}),
        clock,
        logger: opts.logger,
        builtins: opts.builtins ?? builtinPlugins,
        ...(opts.presetsDir ? { presetsDir: opts.presetsDir } : {}),
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
        ...(opts.env ? { env: opts.env } : {}),
      }),
    connect(s: Submit): void {
      submit = s;
    },
  };
}

type Builder = ReturnType<typeof generationBuilder>;

/** The first generation and the store it names; what was made is closed again when either fails. */
export async function firstGenerationAndStore(
  opts: ServiceOptions,
  builder: Builder,
  clock: () => number,
  workers: SpareWorkerSource | undefined,
) {
  let first: Generation;
  try {
    first = await builder.build(opts.initial);
  } catch (err) {
    await workers?.close();
    throw err;
  }
  for (const w of first.warnings) opts.logger.warn(w);
  let store: Store;
  try {
    store = await openStore(first.config.storage, { clock });
  } catch (err) {
    await first.dispose();
    await workers?.close();
    throw err;
  }
  for (const w of await store.startupWarnings().catch(() => [])) opts.logger.warn(w);
  return { first, store };
}

/** The runner, outbox, heartbeat and dispatcher, wired to each other. */
export function createRuntime(store: Store, generations: GenerationRef, logger: Logger, clock: () => number) {
  let outbox: Outbox | undefined;
  let heartbeat: Heartbeat | undefined;
  const tokens = new TokenTally();
  const runner = createRunner({
    records: store.records,
    queue: store.runs,
    generations,
    logger: runtimeLogger(logger, 'runner'),
    clock,
    requestHeartbeat: () => heartbeat?.request(),
    notifyOutbox: (entry) => outbox?.notify(entry),
    tokens,
  });
  const out = (outbox = createOutbox({ records: store.records, generations, logger: runtimeLogger(logger, 'outbox'), clock }));
  const beat = (heartbeat = createHeartbeat({
    records: store.records,
    tasks: store.tasks,
    generations,
    logger: runtimeLogger(logger, 'heartbeat'),
    clock,
    notifyOutbox: (entry) => out.notify(entry),
    tokens,
  }));
  const dispatcher = createDispatcher({
    records: store.records,
    clock,
    runsAccepted: () => runner.notify(),
    queuedRuns: () => runner.queued(),
    requestHeartbeat: () => beat.request(),
  });
  return { runner, outbox: out, heartbeat: beat, dispatcher, tokens };
}

export type Runtime = ReturnType<typeof createRuntime>;
