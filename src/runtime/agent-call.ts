/**
 * One call of an agent provider with a deadline: used by runs and heartbeats.
 */
import type { Generation } from '../generation/types.ts';
import type { AgentMessage, AgentRequest, AgentUsage } from '../plugins/define.ts';
import { splitModel } from '../config/rules.ts';
import { RecycledSet } from '../util/recycled.ts';
import { stripBoundary, stripBoundaryHead } from '../safety/boundary.ts';

export type CallResult =
  | { status: 'ok'; text: string; usage?: AgentUsage; forwarded?: { runId: string | null } }
  | { status: 'timeout'; error: string }
  | { status: 'error'; error: string }
  | { status: 'aborted' };

export interface CallOptions {
  runId: string;
  sessionKey: string;
  model: string;
  thinking: string | null;
  messages: AgentMessage[];
  /** The agent's instructions (a system prompt); none when absent. */
  instructions?: string | null;
  timeoutMs: number;
  /** The hook run's action, for a provider that hands it on (`AgentRequest.hook`); absent for a heartbeat. */
  hook?: AgentRequest['hook'];
  /** Aborts the call when the service shuts down (the run is then re-queued). */
  shutdown: Shutdown;
}

/**
 * Aborts the calls still running when the service shuts down. Each call registers its own
 * controller here rather than a listener on one long-lived AbortSignal: an AbortSignal keeps its
 * listeners in a Map that would churn with every call (see util/recycled.ts).
 */
export class Shutdown {
  private readonly calls = new RecycledSet<AbortController>();
  private why: { reason: unknown } | undefined;

  get aborted(): boolean {
    return this.why !== undefined;
  }

  /** Aborts every call registered, and any registered from now on, with `reason`. */
  abort(reason: unknown): void {
    if (this.why) return;
    this.why = { reason };
    for (const c of [...this.calls]) c.abort(reason);
    this.calls.clear();
  }

  add(call: AbortController): void {
    if (this.why) call.abort(this.why.reason);
    else this.calls.add(call);
  }

  delete(call: AbortController): void {
    this.calls.delete(call);
  }
}

class RunTimeout extends Error {}

export async function callAgent(gen: Generation, o: CallOptions): Promise<CallResult> {
  const parts = splitModel(o.model);
  const provider = parts && gen.providers.get(parts.provider);
  if (!parts || !provider) return { status: 'error', error: `model "${o.model}": provider not configured` };
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new RunTimeout(`timed out after ${o.timeoutMs / 1000}s`)), o.timeoutMs);
  o.shutdown.add(ac);
  try {
    // race the provider against the signal, so a provider that ignores it cannot hold the run
    const aborted = new Promise<never>((_, reject) => {
      if (ac.signal.aborted) reject(ac.signal.reason);
      ac.signal.addEventListener('abort', () => reject(ac.signal.reason), { once: true });
    });
    const reply = await Promise.race([
      provider.run({
        runId: o.runId,
        sessionKey: o.sessionKey,
        model: parts.model,
        thinking: o.thinking,
        messages: o.messages,
        instructions: o.instructions ?? null,
        signal: ac.signal,
        timeoutMs: o.timeoutMs,
        ...(o.hook ? { hook: o.hook } : {}),
      }),
      aborted,
    ]);
    if (reply?.forwarded) return { status: 'ok', text: '', forwarded: { runId: reply.forwarded.runId ?? null } };
    if (typeof reply?.text !== 'string') return { status: 'error', error: 'provider returned no text' };
    const usage = usageOf(reply.usage);
    return usage ? { status: 'ok', text: reply.text, usage } : { status: 'ok', text: reply.text };
  } catch (err) {
    if (ac.signal.aborted && ac.signal.reason instanceof RunTimeout) return { status: 'timeout', error: ac.signal.reason.message };
    if (o.shutdown.aborted) return { status: 'aborted' };
    return { status: 'error', error: oneLine(err instanceof Error ? err.message : String(err), 500) };
  } finally {
    clearTimeout(timer);
    o.shutdown.delete(ac);
  }
}

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

/** A reply's usage as stored: both counts non-negative integers, else none (a plugin's mistake costs the run its usage, not its reply). */
function usageOf(u: unknown): AgentUsage | undefined {
  if (typeof u !== 'object' || u === null) return undefined;
  const { inputTokens, outputTokens } = u as Record<string, unknown>;
  return isCount(inputTokens) && isCount(outputTokens) ? { inputTokens, outputTokens } : undefined;
}

/**
 * Collapses whitespace and truncates: for summaries and error reasons. Only the start of a long text
 * can show, so it flattens a prefix, longer each time whitespace shrinks it too much, and the whole
 * text only when that is short anyway (a 100 KiB reply costs what its first few KiB cost).
 */
export function oneLine(s: string, max: number): string {
  for (let n = 4 * (max + 2); n < s.length; n *= 4) {
    // longer than max + 1: the whole text, flattened, starts with the same max - 1 characters and is longer than max
    const start = s.slice(0, n).replace(/\s+/g, ' ').trimStart();
    if (start.length > max + 1) return `${start.slice(0, max - 1)}…`;
  }
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * `oneLine(stripBoundary(text), max)`: a reply's summary. Like oneLine it reads only the start of a long
 * text, stripped of boundary lines as far as it goes (`stripBoundaryHead`), so a 100 KiB reply is not
 * copied whole to be stripped.
 */
export function replySummary(text: string, max: number): string {
  for (let n = 4 * (max + 2); n < text.length; n *= 4) {
    const head = stripBoundaryHead(text, n);
    if (head === undefined) continue;
    // as in oneLine: longer than max + 1 once flattened, so the whole starts with the same max - 1 characters
    const start = head.replace(/\s+/g, ' ').trimStart();
    if (start.length > max + 1) return `${start.slice(0, max - 1)}…`;
  }
  return oneLine(stripBoundary(text), max);
}

const ACK = /^\s*HEARTBEAT_OK\s*$/i;
/** A reply that is only a heartbeat acknowledgement (`HEARTBEAT_OK`, any case, surrounding whitespace ignored). */
export function isHeartbeatAck(text: string): boolean {
  return ACK.test(text);
}
