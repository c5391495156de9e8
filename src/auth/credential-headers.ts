/**
 * Which request headers carry a credential: the one policy for what templates and transforms may see
 * and what the request log may keep (docs/http.md, "Kept requests"). Neither ever sees one.
 */

/**
 * Header names that carry a credential: authorization and cookies, and any name that speaks of a token,
 * a signature, an HMAC, a secret, a key, a password or an assertion (`x-gateway-token`, `x-gitlab-token`,
 * `x-hub-signature-256`, `x-shopify-hmac-sha256`, `webhook-signature`, `x-telegram-bot-api-secret-token`,
 * `x-goog-iap-jwt-assertion`, `x-api-key`): every built-in verifier's header is one (docs/verifiers.md).
 */
const CREDENTIAL =
  /^(authorization|proxy-authorization|cookie|set-cookie)$|token|signature|hmac|secret|password|passwd|api-?key|jwt|assertion|credential|^x-auth/;

/** The verdict per header name seen: senders repeat a handful of names, and the pattern is tried once for each. */
const seen = new Map<string, boolean>();
const SEEN_MAX = 1000;

/** `extra`: the names the configuration's mappings take a signature from (`verify.header`), beyond the pattern. */
export function isCredentialHeader(name: string, extra: ReadonlySet<string>): boolean {
  if (extra.size && extra.has(name)) return true;
  let v = seen.get(name);
  if (v === undefined) {
    v = CREDENTIAL.test(name);
    // names are chosen by senders: a flood of new ones starts the memo over rather than growing it
    if (seen.size >= SEEN_MAX) seen.clear();
    seen.set(name, v);
  }
  return v;
}
