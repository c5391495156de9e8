/**
 * A run's outcome and where its reply goes, built the same way for hook runs and heartbeats: the
 * transcript lines, the summary, and the delivery (an outbox entry, or skipped with the reason).
 */
import { uuidv7 } from '../util/uuid7.ts';
import type { Generation } from '../generation/types.ts';
import type { MetaRecords } from '../store/roles.ts';
import type { NewEvent, NewRun, RunOutcome, TokenUsage } from '../store/types.ts';
import { isHeartbeatAck, oneLine, replySummary } from './agent-call.ts';
import { hookLine } from '../safety/boundary.ts';
import { resolveRoute } from './routes.ts';

const SUMMARY_MAX = 300;

/**
 * What the agent call came to; an interrupted call is an error with its reason. A `forwarded` one was
 * handed to another system, which replies and delivers by itself.
 */
export type RunResult =
  | { status: 'ok'; text: string; usage?: TokenUsage; forwarded?: { runId: string | null } }
  | { status: 'error' | 'timeout'; error: string };

/** The delivery reason of a forwarded run: its reply is the other system's to deliver. */
export const FORWARDED = 'forwarded';

export interface OutcomeInput {
  run: Pick<NewRun, 'id' | 'sessionKey' | 'deliver' | 'channel' | 'to'>;
  result: RunResult;
  finishedAt: number;
  /** The prompt the agent was given and when, kept as the session's user line; absent when no agent was called. */
  prompt?: { content: string; at: number };
  /** Why the reply is not delivered when the run did not succeed. */
  failedReason: string;
  /** Give an ok run a one-line summary of its reply (hook runs; a heartbeat has none). */
  summarize?: boolean;
  /** Keep the reply as the session's assistant line (default); a delivery without a model keeps none. */
  transcript?: boolean;
  /** The reply belongs to the main session: once sent, its route becomes the main route. */
  mainSession?: boolean;
}

/** The outcome to store with `RunRecords.finishRun`. Reads the main route (`meta`) when the reply is to be delivered. */
export async function buildOutcome(gen: Generation, meta: MetaRecords, o: OutcomeInput): Promise<RunOutcome> {
  const { run, result, finishedAt } = o;
  const ok = result.status === 'ok';
  const outcome: RunOutcome = {
    id: run.id,
    status: result.status,
    finishedAt,
    reply: ok ? result.text : null,
    summary: null,
    error: ok ? null : result.error,
    usage: ok ? (result.usage ?? null) : null,
    messages: o.prompt
      ? [{ sessionKey: run.sessionKey, role: 'user', content: o.prompt.content, runId: run.id, createdAt: o.prompt.at }]
      : [],
    delivery: { kind: 'skipped', reason: o.failedReason },
  };
  if (!ok) return outcome;
  if (result.forwarded) {
    // no reply of its own: nothing to summarise, keep as an answer or deliver (docs/runtime.md, "Forwarded runs")
    outcome.reply = null;
    outcome.forwarded = result.forwarded;
    outcome.delivery = { kind: 'skipped', reason: FORWARDED };
    return outcome;
  }
  if (o.summarize) outcome.summary = replySummary(result.text, SUMMARY_MAX) || '(empty reply)';
  if (o.transcript !== false)
    outcome.messages.push({ sessionKey: run.sessionKey, role: 'assistant', content: result.text, runId: run.id, createdAt: finishedAt });
  outcome.delivery = await deliveryOf(gen, meta, o, result.text);
  return outcome;
}

async function deliveryOf(gen: Generation, meta: MetaRecords, o: OutcomeInput, text: string): Promise<RunOutcome['delivery']> {
  const { run } = o;
  if (!run.deliver) return { kind: 'skipped', reason: 'deliver is false' };
  if (isHeartbeatAck(text)) return { kind: 'skipped', reason: 'heartbeat acknowledgement only' };
  if (!text.trim()) return { kind: 'skipped', reason: 'empty reply' };
  const d = await resolveRoute(gen, meta, run.channel, run.to);
  if ('skip' in d) return { kind: 'skipped', reason: d.skip, channel: d.route?.channel ?? null, to: d.route?.to ?? null };
  const entry = { id: uuidv7(), runId: run.id, channel: d.route.channel, to: d.route.to, text, createdAt: o.finishedAt };
  return { kind: 'outbox', entry: o.mainSession ? { ...entry, mainSession: true } : entry };
}

/** The summary event of a finished run, for the main session. */
export function summaryEvent(run: NewRun, o: RunOutcome, at: number): NewEvent {
  const body = o.status === 'ok' ? o.summary! : oneLine(o.error ?? o.status, SUMMARY_MAX);
  const status = o.status === 'ok' ? '' : ` (${o.status})`;
  const text = run.trusted
    ? `Hook ${run.hookName}${status}: ${body}`
    : hookLine(run.hookName, run.nameTrusted === true, status, body, run.label);
  return { id: uuidv7(), source: 'run', text, createdAt: at, runId: run.id };
}
