/**
 * What the Gmail bridge needs, taken from a loaded config (`hooks.gmail` with its defaults filled
 * in), and the outside world it talks through: `fetch`, the clock and timers are handed in so
 * tests can stand in for Google and move time.
 */
import type { Config } from '../config/schema.ts';

export type Gmail = NonNullable<Config['hooks']['gmail']>;

export interface Deps {
  fetch: typeof fetch;
  /** Milliseconds since the epoch. */
  now: () => number;
  /** Calls `fn` after `ms`; returns a function that cancels it. */
  schedule: (fn: () => void, ms: number) => () => void;
}

export const realDeps = (): Deps => ({
  fetch: globalThis.fetch,
  now: Date.now,
  schedule: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
});

/** An error a user fixes in the config; names the key. */
export class GmailConfigError extends Error {}

/** `hooks.gmail`, or an error saying it is missing. */
export function gmailSection(config: Config): Gmail {
  const g = config.hooks.gmail;
  if (!g) throw new GmailConfigError('hooks.gmail is not set (hook-intake webhooks gmail setup writes it)');
  return g;
}

/** `hooks.gmail.<key>`, or an error naming it. */
export function required<K extends keyof Gmail>(g: Gmail, key: K, why: string): NonNullable<Gmail[K]> {
  const v = g[key];
  if (v === undefined || v === null || v === '') throw new GmailConfigError(`hooks.gmail.${String(key)} is required ${why}`);
  return v as NonNullable<Gmail[K]>;
}

/** The OAuth client and refresh token, or an error naming the missing key. */
export function oauthCredentials(g: Gmail): { clientId: string; clientSecret: string; refreshToken: string } {
  const o = g.oauth ?? {};
  for (const k of ['clientId', 'clientSecret', 'refreshToken'] as const) {
    if (!o[k])
      throw new GmailConfigError(
        `hooks.gmail.oauth.${k} is required to call the Gmail API (hook-intake webhooks gmail auth stores the refresh token)`,
      );
  }
  return o as { clientId: string; clientSecret: string; refreshToken: string };
}

/** True when the config holds everything the Gmail API needs. */
export const hasCredentials = (g: Gmail): boolean => !!(g.oauth?.clientId && g.oauth.clientSecret && g.oauth.refreshToken);

/** `https://host/` + `gmail/v1/…`, whether or not the base URL ends with a slash. */
export const joinUrl = (base: string, path: string): string => `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
