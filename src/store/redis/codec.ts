/** Records ⇄ the driver's hashes and list entries: what each field holds, and the record it makes back. */
import type {
  Delivery,
  DeliveryStatus,
  NewDelivery,
  NewEvent,
  NewMessage,
  NewRun,
  Run,
  RunStatus,
  SessionMessage,
  SystemEvent,
} from '../types.ts';

export type Hash = Record<string, string>;

const num = (v: string | undefined) => (v === undefined ? null : Number(v));
const str = (v: string | undefined) => (v === undefined ? null : v);

/** A run's hash: the run as accepted (`n`, JSON) and the fields that change. */
export function toRun(h: Hash): Run {
  const run = JSON.parse(h.n!) as NewRun;
  return {
    ...run,
    // a run stored before agents had ids ran on the one agent there was
    agentId: run.agentId === undefined ? (run.kind === 'deliver' ? null : 'main') : run.agentId,
    sessionMode: run.sessionMode ?? 'persistent',
    status: h.status as RunStatus,
    attempts: Number(h.attempts ?? 0),
    startedAt: num(h.startedAt),
    finishedAt: num(h.finishedAt),
    reply: str(h.reply),
    summary: str(h.summary),
    error: str(h.error),
    usage: h.inTok === undefined ? null : { inputTokens: Number(h.inTok), outputTokens: Number(h.outTok) },
    delivery: {
      status: (h.dStatus ?? 'pending') as DeliveryStatus,
      reason: str(h.dReason),
      channel: str(h.dChannel),
      to: str(h.dTo),
      attempts: Number(h.dAttempts ?? 0),
    },
    forwarded: h.fwd === undefined ? null : (JSON.parse(h.fwd) as Run['forwarded']),
  };
}

/** An event's hash: the event as accepted (`j`, JSON) and how it was consumed. */
export function toEvent(h: Hash): SystemEvent {
  const e = JSON.parse(h.j!) as NewEvent;
  return {
    id: e.id,
    source: e.source,
    text: e.text,
    status: h.status === 'consumed' ? 'consumed' : 'pending',
    createdAt: e.createdAt,
    consumedAt: num(h.at),
    heartbeatId: str(h.hb),
    runId: e.runId ?? null,
  };
}

export const eventJson = (e: NewEvent) =>
  JSON.stringify({ id: e.id, source: e.source, text: e.text, createdAt: e.createdAt, runId: e.runId ?? null });

/** A transcript line is stored as `<id> <json>`: the id the server gave it, then the message without it. */
export const messageJson = (m: NewMessage) => JSON.stringify({ role: m.role, content: m.content, runId: m.runId, createdAt: m.createdAt });

export function toMessage(sessionKey: string, entry: string): SessionMessage {
  const space = entry.indexOf(' ');
  const m = JSON.parse(entry.slice(space + 1)) as Omit<NewMessage, 'sessionKey'>;
  return { id: Number(entry.slice(0, space)), sessionKey, role: m.role, content: m.content, runId: m.runId, createdAt: m.createdAt };
}

export const deliveryJson = (d: NewDelivery) =>
  JSON.stringify({
    id: d.id,
    runId: d.runId,
    channel: d.channel,
    to: d.to,
    text: d.text,
    createdAt: d.createdAt,
    mainSession: d.mainSession === true,
    ...(d.event ? { event: d.event } : {}),
  });

/** A delivery's hash: the entry as written (`j`, JSON) and its progress. */
export function toDelivery(h: Hash): Delivery {
  const d = JSON.parse(h.j!) as Required<Omit<NewDelivery, 'event'>> & Pick<NewDelivery, 'event'>;
  return {
    id: d.id,
    runId: d.runId,
    channel: d.channel,
    to: d.to,
    text: d.text,
    status: h.status as Delivery['status'],
    attempts: Number(h.attempts ?? 0),
    nextAttemptAt: Number(h.next),
    lastError: str(h.err),
    parts: h.parts === undefined ? null : (JSON.parse(h.parts) as string[]),
    sentParts: Number(h.sent ?? 0),
    ambiguousPart: num(h.amb),
    mainSession: d.mainSession,
    createdAt: d.createdAt,
    updatedAt: Number(h.upd),
    ...(d.event ? { event: d.event } : {}),
  };
}

/** A flat `[field, value, …]` reply as a hash. */
export function pairs(flat: string[]): Hash {
  const h: Hash = {};
  for (let i = 0; i < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
  return h;
}
