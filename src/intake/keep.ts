/**
 * What of a hook request is kept for the request log (docs/http.md, "Kept requests"): the headers without credentials, the
 * URL without a `token` parameter, and the raw body as received.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Generation } from '../generation/build.ts';

/**
 * Header names that carry a credential: authorization and cookies, and any name that speaks of a token,
 * a signature, a secret, a key, a password or an assertion (`x-gateway-token`, `x-hub-signature-256`,
 * `x-slack-signature`, `webhook-signature`, `x-telegram-bot-api-secret-token`, `x-goog-iap-jwt-assertion`,
 * `x-api-key`).
 */
const CREDENTIAL =
  /^(authorization|proxy-authorization|cookie|set-cookie)$|token|signature|secret|password|passwd|api-?key|jwt|assertion|credential|^x-auth/;

/** Header names the generation's mappings take a signature from (`verify.header`), beyond the pattern. */
const configured = new WeakMap<Generation, ReadonlySet<string>>();

export function credentialHeaders(gen: Generation): ReadonlySet<string> {
  let set = configured.get(gen);
  if (!set) {
    const names = new Set<string>();
    for (const m of gen.config.hooks.mappings) {
      const h = (m.verify as { header?: unknown } | undefined)?.header;
      if (typeof h === 'string') names.add(h.toLowerCase());
    }
    configured.set(gen, (set = names));
  }
  return set;
}

export function isCredentialHeader(name: string, extra: ReadonlySet<string>): boolean {
  return CREDENTIAL.test(name) || extra.has(name);
}

/** The headers to keep: every one but the credentials, a repeated one joined with `, `. */
export function keptHeaders(headers: IncomingHttpHeaders, extra: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const v = headers[name];
    if (v === undefined || isCredentialHeader(name, extra)) continue;
    out[name] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** The URL without its `token` query parameter (a hook token may come there when `hooks.allowQueryToken` is on). */
export function keptUrl(path: string, query: URLSearchParams | undefined): string {
  if (!query) return path;
  const q = new URLSearchParams(query);
  q.delete('token');
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
