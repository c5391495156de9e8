/**
 * The driver's Lua scripts, loaded into a client as commands (ioredis runs each by its SHA1 and sends
 * the text only when the server does not have it yet).
 */
import type { Redis } from 'ioredis';
import { COUNT_IN_WINDOW, DUE_DELIVERIES, PRUNE_IDEMPOTENCY, RECORD_DELIVERY, REDELIVER } from './lua/outbox.ts';
import { PRUNE } from './lua/prune.ts';
import { CLAIM, CLAIM_TASKS, END, ENQUEUE, QUEUE_PRELUDE } from './lua/queue.ts';
import { ACCEPT, FAIL_HEARTBEATS, FINISH_RUN, INSERT_HEARTBEAT, PRELUDE, REQUEUE_RUN, START_RUN } from './lua/records.ts';

const SCRIPTS = {
  hiAccept: ACCEPT,
  hiStartRun: START_RUN,
  hiRequeueRun: REQUEUE_RUN,
  hiInsertHeartbeat: INSERT_HEARTBEAT,
  hiFailHeartbeats: FAIL_HEARTBEATS,
  hiFinishRun: FINISH_RUN,
  hiRecordDelivery: RECORD_DELIVERY,
  hiDueDeliveries: DUE_DELIVERIES,
  hiPruneIdempotency: PRUNE_IDEMPOTENCY,
  hiCountInWindow: COUNT_IN_WINDOW,
  hiRedeliver: REDELIVER,
  hiPrune: PRUNE,
  hiClaim: QUEUE_PRELUDE + CLAIM,
  hiEnd: QUEUE_PRELUDE + END,
  hiEnqueue: ENQUEUE,
  hiClaimTasks: QUEUE_PRELUDE + CLAIM_TASKS,
};

export type ScriptName = keyof typeof SCRIPTS;
export type Arg = string | number | Buffer;

/** Calls one of the scripts with its arguments (the key prefix first). */
export type RunScript = (name: ScriptName, args: Arg[]) => Promise<unknown>;

export function loadScripts(client: Redis): RunScript {
  for (const [name, lua] of Object.entries(SCRIPTS)) client.defineCommand(name, { numberOfKeys: 0, lua: PRELUDE + lua });
  return (name, args) => (client as unknown as Record<ScriptName, (...a: Arg[]) => Promise<unknown>>)[name](...args);
}
