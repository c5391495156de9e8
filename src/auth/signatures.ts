/**
 * Provider HMAC signature verification (docs/verifiers.md; SECURITY.md, "What a signature secret grants"), pure: no I/O, no clock, no
 * logging. A mapping's `verify` spec is compiled once per config generation
 * (secrets checked, decoded and sealed in KeyObjects); the compiled verifier
 * runs per request over the exact raw body bytes:
 *
 *   const verify = compileVerifier(mapping.verify);          // at config load; throws SignatureConfigError
 *   const r = verify(ctx.headers, rawBody, clock());          // per request; never throws
 *   if (!r.ok) log.warn({ hook, reason: r.reason }, 'signature rejected'); // → 401 INVALID_SIGNATURE
 *
 * Guarantees:
 * - every configured secret is tried and every candidate compared (rotation:
 *   any secret and any listed signature may match), each comparison in
 *   constant time over buffers of the digest's size;
 * - the signature is checked before the timestamp window, so a stale but
 *   genuine request reads "timestamp outside tolerance" (replay or clock skew),
 *   not a forgery; the window is symmetric (±toleranceSeconds, default 300);
 * - hostile or malformed headers yield `{ok:false}`, never an exception;
 * - `reason` is one of a fixed set of phrases: it never carries a secret,
 *   a signature or any header content, so it is safe to log.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import { HEADER_NAME, headerValue, matchingKey, MAX_HEADER_CHARS, type HeaderBag } from './signature-parts.ts';
import { SCHEMES, type SignatureFailure, type SignatureType } from './signature-schemes.ts';

export type { HeaderBag } from './signature-parts.ts';
export type { SignatureFailure, SignatureType } from './signature-schemes.ts';

/** A mapping's `verify` object (config `hooks.mappings[].verify`). */
export interface VerifySpec {
  type: SignatureType;
  /** One secret, or several during a rotation (any of them may sign). */
  secret: string | readonly string[];
  /** Overrides the name of the header carrying the signature. */
  header?: string | undefined;
  /** Width of the timestamp window either side of now; only for schemes that sign a timestamp. */
  toleranceSeconds?: number | undefined;
}

export type VerifyResult =
  | {
      readonly ok: true /** Which configured secret matched (0-based), to tell when a rotated-out secret is no longer used. */;
      readonly secretIndex: number;
    }
  | { readonly ok: false; readonly reason: SignatureFailure };

/** `nowMs` is the injected clock (milliseconds since the epoch). */
export type SignatureVerifier = (headers: HeaderBag, rawBody: Uint8Array, nowMs: number) => VerifyResult;

export const DEFAULT_TOLERANCE_SECONDS = 300;
const MAX_TOLERANCE_SECONDS = 86_400;

/** A problem with a `verify` spec; `path` is relative to the spec (`secret[1]`, `header`, …). */
export interface VerifySpecIssue {
  path: string;
  message: string;
}

export class SignatureConfigError extends Error {
  readonly issues: VerifySpecIssue[];
  constructor(issues: VerifySpecIssue[]) {
    super(issues.map((i) => `${i.path}: ${i.message}`).join('\n'));
    this.name = 'SignatureConfigError';
    this.issues = issues;
  }
}

const secretsOf = (spec: VerifySpec): readonly unknown[] => (Array.isArray(spec.secret) ? spec.secret : [spec.secret]);

/** Every problem with `spec`, for `hook-intake check` and config reload. Messages never quote a secret. */
export function verifySpecIssues(spec: VerifySpec): VerifySpecIssue[] {
  const issues: VerifySpecIssue[] = [];
  if (typeof spec.type !== 'string' || !Object.hasOwn(SCHEMES, spec.type)) {
    return [{ path: 'type', message: `must be one of ${Object.keys(SCHEMES).join(', ')}` }];
  }
  const scheme = SCHEMES[spec.type];
  const secrets = secretsOf(spec);
  if (secrets.length === 0) issues.push({ path: 'secret', message: 'at least one secret is required' });
  for (const [i, s] of secrets.entries()) {
    const path = Array.isArray(spec.secret) ? `secret[${i}]` : 'secret';
    if (typeof s !== 'string' || s.length === 0) {
      issues.push({ path, message: 'must be a non-empty string' });
      continue;
    }
    const key = scheme.key(s);
    if (typeof key === 'string') issues.push({ path, message: key });
  }
  if (spec.header !== undefined && (typeof spec.header !== 'string' || !HEADER_NAME.test(spec.header))) {
    issues.push({ path: 'header', message: 'must be an HTTP header name' });
  }
  if (spec.toleranceSeconds !== undefined) {
    if (!scheme.timestamped) {
      issues.push({ path: 'toleranceSeconds', message: `has no effect: ${spec.type} signatures carry no timestamp` });
    } else if (!Number.isInteger(spec.toleranceSeconds) || spec.toleranceSeconds < 1 || spec.toleranceSeconds > MAX_TOLERANCE_SECONDS) {
      issues.push({ path: 'toleranceSeconds', message: `must be a whole number of seconds from 1 to ${MAX_TOLERANCE_SECONDS}` });
    }
  }
  return issues;
}

const fail = (reason: SignatureFailure): VerifyResult => ({ ok: false, reason });

/** Compiles `spec` into a verifier. Throws SignatureConfigError when the spec is unusable. */
export function compileVerifier(spec: VerifySpec): SignatureVerifier {
  const issues = verifySpecIssues(spec);
  if (issues.length) throw new SignatureConfigError(issues);
  const scheme = SCHEMES[spec.type];
  const header = (spec.header ?? scheme.header).toLowerCase();
  const alsoHeader = spec.header === undefined ? scheme.alsoHeader : undefined;
  // KeyObjects keep the key bytes out of reach of accidental logging or serialisation.
  const keys: KeyObject[] = secretsOf(spec).map((s) => createSecretKey(scheme.key(s as string) as Buffer));
  const tolerance = spec.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const digest = scheme.digest ?? 'sha256';

  return function verifySignature(headers, rawBody, nowMs) {
    try {
      const value = headerValue(headers, header) || (alsoHeader ? headerValue(headers, alsoHeader) : undefined);
      if (!value) return fail('missing signature header');
      if (value.length > MAX_HEADER_CHARS) return fail('malformed signature header');
      const parts = scheme.read(value, headers);
      if (typeof parts === 'string') return fail(parts);

      // No early exit: every secret and every candidate is compared, so the
      // time taken does not tell which secret or which listed signature matched.
      const matched = matchingKey(keys, digest, [Buffer.from(parts.prefix, 'latin1'), rawBody], parts.candidates);
      if (matched < 0) return fail('no signature matches');

      if (scheme.timestamped) {
        const age = Math.floor(nowMs / 1000) - parts.timestamp!;
        // written so that NaN (a broken clock) fails closed
        if (!(Math.abs(age) <= tolerance)) return fail('timestamp outside tolerance');
      }
      return { ok: true, secretIndex: matched };
    } catch {
      return fail('verifier error');
    }
  };
}
