/**
 * Slack's Events API sends `{"type":"url_verification","challenge":…}` when a
 * request URL is saved; once its v0 signature verifies (signatures.ts), it is
 * answered `{"challenge":…}` directly and nothing is stored.
 */
import type { VerifyOutcome } from '../../plugins/define.ts';

const MAX_CHALLENGE_CHARS = 512;

/** The challenge of a `url_verification` request, or undefined for any other payload. */
function challengeOf(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  const p = payload as { type?: unknown; challenge?: unknown };
  if (p.type !== 'url_verification' || typeof p.challenge !== 'string') return undefined;
  return p.challenge.length > 0 && p.challenge.length <= MAX_CHALLENGE_CHARS ? p.challenge : undefined;
}

/** A verified request's outcome, with the direct answer when it is Slack's URL check. */
export function withUrlVerification(verified: VerifyOutcome, payload: unknown): VerifyOutcome {
  if (!verified.ok) return verified;
  const challenge = challengeOf(payload);
  return challenge === undefined ? verified : { ...verified, answer: { status: 200, body: { challenge } } };
}
