/**
 * What a run does with its reply, as callbacks and waiting requests report it (docs/callbacks.md,
 * "Events"): `visible` for reply text to be delivered, `silent` for reply text not delivered (by choice:
 * `deliver: false`, an acknowledgement only; or for want of a route), `empty` for no reply text.
 */
export type ReplyDisposition = 'visible' | 'silent' | 'empty';

/** `reply` is the run's text (null when it failed); `delivered` whether it went to the outbox. */
export function replyDisposition(reply: string | null, delivered: boolean): ReplyDisposition {
  if (reply === null || !reply.trim()) return 'empty';
  return delivered ? 'visible' : 'silent';
}
