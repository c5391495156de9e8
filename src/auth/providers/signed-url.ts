/**
 * The URL a provider signed, for the schemes that sign it (Twilio, HubSpot; docs/verifiers.md,
 * "Schemes that sign the URL"): `publicUrl` followed by the request's query as sent, when it is
 * configured; otherwise rebuilt from `X-Forwarded-Proto` (`http` without it, as the service itself
 * serves), `Host` and the request's path and query. Both sides only ever sign, so trusting these
 * headers gives a caller nothing: a URL it chooses still needs the secret's signature.
 */
import { Type } from '@sinclair/typebox';
import { PluginConfigError } from '../../plugins/define.ts';
import type { HeaderBag } from '../signature-parts.ts';
import { headerValue } from '../signature-parts.ts';

export const PublicUrl = Type.String({
  minLength: 1,
  description: 'the hook URL as entered at the provider, without a query (https://hooks.example.com/hooks/twilio)',
});

/** A checked `publicUrl` option; throws PluginConfigError naming it. */
export function publicUrlOption(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new PluginConfigError('publicUrl', 'must be an absolute http or https URL');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new PluginConfigError('publicUrl', 'must be an absolute http or https URL');
  if (value.includes('?') || value.includes('#') || u.username || u.password)
    throw new PluginConfigError('publicUrl', "must not hold a query, a fragment or credentials: the request's own query is appended to it");
  return value;
}

/** The signed URL, or undefined when it cannot be rebuilt (no `Host`). `url` is the request's path and query. */
export function signedUrl(headers: HeaderBag, url: string, publicUrl: string | undefined): string | undefined {
  const q = url.indexOf('?');
  const query = q < 0 ? '' : url.slice(q);
  if (publicUrl !== undefined) return `${publicUrl}${query}`;
  const host = headerValue(headers, 'host');
  if (!host || /[\s/?#@]/.test(host)) return undefined;
  const forwarded = headerValue(headers, 'x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  const proto = forwarded === 'https' || forwarded === 'http' ? forwarded : 'http';
  return `${proto}://${host}${url}`;
}
