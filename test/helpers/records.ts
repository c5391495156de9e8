/**
 * Builders of store records for unit tests: complete, valid defaults that a
 * test overrides field by field.
 */
import { randomUUID } from 'node:crypto';
import type { NewDelivery, NewEvent, NewMessage, NewRun, RunOutcome } from '../../src/store/types.ts';

export function newRun(over: Partial<NewRun> = {}): NewRun {
  return {
    id: randomUUID(),
    kind: 'hook',
    hookName: 'Hook',
    label: 'Webhook',
    trusted: false,
    nameTrusted: false,
    sessionKey: `hook:${randomUUID()}`,
    message: 'hello',
    model: 'echo/echo',
    thinking: null,
    timeoutSeconds: 600,
    wakeMode: 'now',
    deliver: true,
    channel: 'last',
    to: null,
    createdAt: 1_000,
    agentId: 'main',
    sessionMode: 'persistent',
    ...over,
  };
}

export function newEvent(over: Partial<NewEvent> = {}): NewEvent {
  return { id: randomUUID(), source: 'wake', text: 'ping', createdAt: 1_000, runId: null, ...over };
}

export function newMessage(over: Partial<NewMessage> = {}): NewMessage {
  return { sessionKey: 's', role: 'user', content: 'hi', runId: null, createdAt: 1_000, ...over };
}

export function newDelivery(runId: string, over: Partial<NewDelivery> = {}): NewDelivery {
  return { id: randomUUID(), runId, channel: 'console', to: null, text: 'reply', createdAt: 2_000, ...over };
}

/** A successful outcome that delivers `reply` through the outbox. */
export function okOutcome(runId: string, over: Partial<RunOutcome> = {}): RunOutcome {
  return {
    id: runId,
    status: 'ok',
    finishedAt: 2_000,
    reply: 'reply',
    summary: 'reply',
    error: null,
    messages: [],
    delivery: { kind: 'outbox', entry: newDelivery(runId) },
    ...over,
  };
}
