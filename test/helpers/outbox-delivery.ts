/**
 * One reply carried by the real outbox to a channel until it is sent or has
 * failed, on an in-memory SQLite store, with the service's log captured: for
 * channel tests that check what reaches the delivery record and the log.
 */
import { GenerationRef } from '../../src/generation/ref.ts';
import { createOutbox } from '../../src/runtime/outbox.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { until } from './cli.ts';
import { captureLogger, runAwaitingDelivery, testGeneration } from './runtime.ts';

export interface DeliveredReply {
  delivery: { status: string; reason: string | null; attempts: number };
  /** Everything the service logged meanwhile, at trace level. */
  log: string;
  /** The run as the store keeps it (the read API shows this), as JSON. */
  record: string;
}

export async function deliverThroughOutbox(
  config: Record<string, unknown>,
  d: { channel: string; to: string; text: string },
): Promise<DeliveredReply> {
  const store = new SqliteStore({ path: ':memory:' });
  const log = captureLogger('trace');
  const g = testGeneration({ delivery: { initialBackoffMs: 10 }, ...config }, { logger: log.logger });
  const outbox = createOutbox({ store, generations: new GenerationRef(g), logger: log.logger });
  try {
    const { runId } = await runAwaitingDelivery(store, d);
    outbox.start();
    await until(async () => ['sent', 'failed', 'skipped'].includes((await store.getRun(runId))!.delivery.status));
    await outbox.idle();
    const run = (await store.getRun(runId))!;
    return { delivery: run.delivery, log: log.text(), record: JSON.stringify(run) };
  } finally {
    await outbox.stop(0);
    await store.close();
  }
}
