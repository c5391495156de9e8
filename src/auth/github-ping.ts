/**
 * GitHub sends a `ping` (`X-GitHub-Event: ping`) when a webhook is created, and shows the webhook as
 * failing unless the answer is a 2xx. A ping whose signature verifies is answered `204` directly,
 * whatever its mapping's `match` takes (a mapping for `push` alone included), and nothing is stored
 * or run (docs/mappings.md, "GitHub's ping").
 */
import type { DirectAnswer, VerifyOutcome } from '../plugins/define.ts';
import { headerValue, type HeaderBag } from './signature-parts.ts';

const PING_ANSWER: DirectAnswer = { status: 204, body: {} };

/** A verified request's outcome, with the direct answer when it is GitHub's ping. */
export function withPing(verified: VerifyOutcome, headers: HeaderBag): VerifyOutcome {
  if (!verified.ok) return verified;
  return headerValue(headers, 'x-github-event')?.trim().toLowerCase() === 'ping' ? { ...verified, answer: PING_ANSWER } : verified;
}
