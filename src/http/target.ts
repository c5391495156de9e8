/**
 * What the HTTP side reads of a request before routing it: its path and query (without a framework on
 * the `/hooks` path) and the client's address.
 */
import type { IncomingMessage } from 'node:http';
import type { Generation } from '../generation/types.ts';

/** The parts of a request URL the handler reads; the query is parsed only when there is one. */
export interface Target {
  path: string;
  query: URLSearchParams | undefined;
  /** The query as sent, without the `?` (empty when there is none). */
  search: string;
}

/** Splits a request target into path and query, as Koa's parser would (absolute form accepted, fragment dropped). */
export function target(url: string): Target {
  if (url.charCodeAt(0) !== 47 /* / */) {
    // absolute form (`POST http://host/hooks/wake`) or something stranger: let the URL parser decide
    try {
      const u = new URL(url);
      return { path: u.pathname, query: u.search ? u.searchParams : undefined, search: u.search.slice(1) };
    } catch {
      return { path: url, query: undefined, search: '' };
    }
  }
  const hash = url.indexOf('#');
  const clean = hash === -1 ? url : url.slice(0, hash);
  const q = clean.indexOf('?');
  if (q === -1) return { path: clean, query: undefined, search: '' };
  const search = clean.slice(q + 1);
  return { path: clean.slice(0, q), query: new URLSearchParams(search), search };
}

/** The client address: the socket peer, or with `gateway.trustProxy` the address the nearest proxy appended. */
export function clientAddress(req: Pick<IncomingMessage, 'headers' | 'socket'>, trustProxy: boolean): string {
  if (trustProxy) {
    const h = req.headers['x-forwarded-for'];
    const xff = Array.isArray(h) ? h.join(', ') : h;
    if (xff) {
      const last = xff.slice(xff.lastIndexOf(',') + 1).trim();
      if (last) return last;
    }
  }
  return req.socket.remoteAddress ?? 'unknown';
}

/** True when `path` is under the hook prefix of the current generation. */
export function isHookPath(gen: Generation, path: string): boolean {
  const hc = gen.config.hooks;
  return hc.enabled && path.startsWith(hc.path) && (path.length === hc.path.length || path.charCodeAt(hc.path.length) === 47) /* / */;
}

/** The hook name after the prefix, without surrounding `/` (empty for the prefix itself). */
export function hookName(gen: Generation, path: string): string {
  return path.slice(gen.config.hooks.path.length).replace(/^\/+|\/+$/g, '');
}
