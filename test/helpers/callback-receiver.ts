/**
 * A callback's receiver (docs/callbacks.md): a stand-in on 127.0.0.1 that checks each event the way a
 * receiver does, with the `standardwebhooks` library and the callback's secret, and the event's shape.
 * What does not verify lands in `problems` (`expectClean()` fails on any).
 */
import { Webhook } from 'standardwebhooks';
import { always, type ProviderStub, type Script, type StubRequest, startProviderStub } from './provider-stub.ts';

/** A Standard Webhooks secret for tests: 32 bytes of `fill`. */
export const callbackSecret = (fill = 7) => `whsec_${Buffer.alloc(32, fill).toString('base64')}`;

const TYPES = ['run.completed', 'run.failed', 'delivery.failed', 'request.rejected'];

/** What a receiver finds wrong with `req` signed with `secret` (empty when it verifies). */
export function verifyEvent(secret: string, req: StubRequest): string[] {
  const problems: string[] = [];
  if (req.method !== 'POST') problems.push(`method ${req.method}`);
  if (req.contentType !== 'application/json') problems.push(`content-type ${req.contentType}`);
  try {
    new Webhook(secret).verify(req.raw.toString('utf8'), req.headers as Record<string, string>);
  } catch (err) {
    problems.push(`signature: ${(err as Error).message}`);
  }
  const e = req.body as { type?: unknown; timestamp?: unknown; data?: unknown } | undefined;
  if (!e || !TYPES.includes(String(e.type))) problems.push(`type ${String(e?.type)}`);
  if (typeof e?.timestamp !== 'string' || Number.isNaN(Date.parse(e.timestamp))) problems.push('timestamp is not a date');
  if (!e?.data || typeof e.data !== 'object') problems.push('data is not an object');
  return problems;
}

/** A receiver answering from `script` (always 204 by default). */
export function startCallbackReceiver(secret: string, script: Script = always({ status: 204 })): Promise<ProviderStub> {
  return startProviderStub({ validate: (req) => verifyEvent(secret, req), script });
}
