/**
 * `verify: {type: "mailgun", secret, toleranceSeconds?}`: Mailgun signs in the body, not a header.
 * A JSON webhook carries `signature: {timestamp, token, signature}` beside `event-data`; a form post
 * (routes, legacy webhooks) carries `timestamp`, `token` and `signature` as fields. `signature` (or
 * `parent-signature`, for a subaccount's domain) is the hex HMAC-SHA256 of `timestamp` followed by
 * `token`, keyed by the HTTP webhook signing key (a list while you rotate, or to add the parent
 * account's key). The timestamp must be within `toleranceSeconds` (default 300), and a token this
 * verifier has already accepted within that window is refused: Mailgun makes a new one per request,
 * so a repeat is a replay. The seen tokens are kept in memory, per process: a replay to another
 * instance, or after a restart, is not recognised. The request log keeps the body with the
 * signatures cut out (`keptBody`).
 */
import { createSecretKey } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { VerifierFactory, VerifyOutcome, VerifyRequest } from '../../plugins/define.ts';
import { bodyWithout, failClosed } from '../chat/tokens.ts';
import { macFromHex, matchingKey } from '../signature-parts.ts';
import { timestampFrom } from '../schemes/scheme.ts';
import { DEFAULT_TOLERANCE_SECONDS } from '../signatures.ts';

const Secret = Type.String({ minLength: 1, description: 'the HTTP webhook signing key' });
const Options = Type.Object(
  {
    secret: Type.Union([Secret, Type.Array(Secret, { minItems: 1 })]),
    toleranceSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
  },
  { additionalProperties: false },
);

const MAX_TOKEN_CHARS = 256;
/** Tokens remembered at once; past it the oldest go first (a flood of valid requests, not an attacker's: only signed tokens are kept). */
export const MAX_SEEN_TOKENS = 100_000;

type Fields = { timestamp?: unknown; token?: unknown; signature?: unknown; 'parent-signature'?: unknown };

/** The signature fields: the JSON webhook's `signature` object, or a form post's top-level fields. */
function fieldsOf(payload: unknown): Fields | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  const p = payload as Fields;
  if (typeof p.signature === 'object' && p.signature !== null && !Array.isArray(p.signature)) return p.signature as Fields;
  return p;
}

/** Tokens accepted within the window, oldest first (a Map keeps insertion order), with when each may be forgotten. */
class SeenTokens {
  private readonly until = new Map<string, number>();

  /** False when `token` was seen and has not expired; otherwise remembers it until `untilMs`. */
  add(token: string, nowMs: number, untilMs: number): boolean {
    for (const [t, u] of this.until) {
      if (u > nowMs && this.until.size < MAX_SEEN_TOKENS) break;
      this.until.delete(t);
    }
    const u = this.until.get(token);
    if (u !== undefined && u > nowMs) return false;
    this.until.delete(token);
    this.until.set(token, untilMs);
    return true;
  }
}

export const mailgunVerifier: VerifierFactory<{ secret: string | string[]; toleranceSeconds?: number }> = {
  configSchema: Options,
  create(options) {
    const keys = (typeof options.secret === 'string' ? [options.secret] : options.secret).map((s) =>
      createSecretKey(Buffer.from(s, 'utf8')),
    );
    const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    const seen = new SeenTokens();
    const verify = (req: VerifyRequest): VerifyOutcome => {
      const f = fieldsOf(req.payload);
      if (!f || f.signature === undefined) return { ok: false, reason: 'missing signature field' };
      const candidates = [f.signature, f['parent-signature']]
        .filter((s) => s !== undefined)
        .map((s) => (typeof s === 'string' ? macFromHex(s) : undefined));
      if (candidates.some((c) => c === undefined)) return { ok: false, reason: 'malformed signature field' };
      if (typeof f.token !== 'string' || f.token === '' || f.token.length > MAX_TOKEN_CHARS)
        return { ok: false, reason: 'missing or malformed token field' };
      const ts = timestampFrom(
        typeof f.timestamp === 'number' ? String(f.timestamp) : typeof f.timestamp === 'string' ? f.timestamp : undefined,
      );
      if (typeof ts === 'string') return { ok: false, reason: ts };
      const matched = matchingKey(keys, 'sha256', [Buffer.from(ts.text + f.token, 'utf8')], candidates as Buffer[]);
      if (matched < 0) return { ok: false, reason: 'no signature matches' };
      // written so that NaN (a broken clock) fails closed
      if (!(Math.abs(Math.floor(req.receivedAt / 1000) - ts.seconds) <= tolerance))
        return { ok: false, reason: 'timestamp outside tolerance' };
      // remembered until the signed timestamp leaves the window: after that the window refuses it anyway
      if (!seen.add(f.token, req.receivedAt, (ts.seconds + tolerance + 1) * 1000)) return { ok: false, reason: 'token seen before' };
      return { ok: true, secretIndex: matched };
    };
    const keptBody = (body: Uint8Array, payload: unknown): Uint8Array => {
      const f = fieldsOf(payload);
      const values = [f?.signature, f?.['parent-signature']].filter((s): s is string => typeof s === 'string' && s !== '');
      return values.length ? bodyWithout(body, values) : body;
    };
    return { verify: failClosed(verify, { ok: false, reason: 'verifier error' }), keptBody };
  },
};
