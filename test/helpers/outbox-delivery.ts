/**
 * Replies carried by the real outbox to a channel, on an in-memory SQLite store, with the
 * service's log captured: for channel tests that check what reaches the delivery record and the
 * log, without reaching into the service's runtime themselves.
 */
import { GenerationRef } from '../../src/generation/ref.ts';
import { createOutbox } from '../../src/runtime/outbox.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import type { RunDelivery } from '../../src/store/types.ts';
import { until } from './cli.ts';
import { captureLogger, runAwaitingDelivery, testGeneration } from './runtime.ts';

/** How many times the outbox tries one delivery before it records it as failed. */
export { MAX_ATTEMPTS } from '../../src/runtime/outbox.ts';

/** A run's delivery as the store keeps it. */
export type Delivery = RunDelivery;

export interface OutboxHarness {
  /** Stores a finished run whose reply waits in the outbox for `channel` (and `to`). */
  queueReply(d: { channel: string; to?: string | null; text: string }): Promise<{ runId: string }>;
  /** Starts delivering what is queued, and what is queued from now on. */
  start(): void;
  /** The run's delivery as the store keeps it (the read API shows this). */
  delivery(runId: string): Promise<Delivery>;
  /** The run as the store keeps it, as JSON. */
  record(runId: string): Promise<string>;
  /** Resolves once no delivery is in flight. */
  idle(): Promise<void>;
  /** Everything the service logged so far, at trace level. */
  log(): string;
  close(): Promise<void>;
}

/** An outbox over the generation `config` makes (retries 10 ms apart unless `delivery` says otherwise), not started yet. */
export function outboxFor(config: Record<string, unknown>): OutboxHarness {
  const store = new SqliteStore({ path: ':memory:' });
  const log = captureLogger('trace');
  const g = testGeneration({ delivery: { initialBackoffMs: 10 }, ...config }, { logger: log.logger });
  const outbox = createOutbox({ records: store.records, generations: new GenerationRef(g), logger: log.logger });
  const run = async (runId: string) => (await store.records.getRun(runId))!;
  return {
    queueReply: (d) => runAwaitingDelivery(store, d),
    start: () => outbox.start(),
    delivery: async (runId) => (await run(runId)).delivery,
    record: async (runId) => JSON.stringify(await run(runId)),
    idle: () => outbox.idle(),
    log: () => log.text(),
    async close() {
      await outbox.stop(0);
      await store.close();
    },
  };
}

export interface DeliveredReply {
  delivery: Delivery;
  /** Everything the service logged meanwhile, at trace level. */
  log: string;
  /** The run as the store keeps it (the read API shows this), as JSON. */
  record: string;
}

/** One reply carried until it is sent, has failed or was skipped. */
export async function deliverThroughOutbox(
  config: Record<string, unknown>,
  d: { channel: string; to: string; text: string },
): Promise<DeliveredReply> {
  const outbox = outboxFor(config);
  try {
    const { runId } = await outbox.queueReply(d);
    outbox.start();
    await until(async () => ['sent', 'failed', 'skipped'].includes((await outbox.delivery(runId)).status));
    await outbox.idle();
    return { delivery: await outbox.delivery(runId), log: outbox.log(), record: await outbox.record(runId) };
  } finally {
    await outbox.close();
  }
}
