/**
 * A hook request on its way through the intake pipeline (docs/development.md, "The intake
 * pipeline"). An adapter builds it — the `/hooks` listener from an HTTP request, a replay from a kept
 * request, a dry run from a file or the console's tester — and every step after that reads only this.
 */
import type { MappingInput } from '../mapping/pipeline.ts';
import type { DirectAnswer } from '../plugins/define.ts';
import { isBuiltInHook } from '../names.ts';
import { jsonText, mediaKind, parseForm, parseJsonText, parseNamedForm } from './parse.ts';

export interface HookRequest extends MappingInput {
  /** Full request path, without the query string. */
  path: string;
  rawBody: Buffer;
  /** True when a valid hook token came with the request (a signed hook may not need one). */
  authenticated: boolean;
  /** Set when the owning mapping's verifier answers the request itself (a handshake): nothing is run or stored. */
  answer?: DirectAnswer;
  /** The kept request this one replays (`POST /api/requests/<id>/replay`). */
  replayOf?: string;
  /** The event type, set by the pipeline's event step when the owning mapping names one. */
  event?: string;
}

/**
 * The payload of a body by its media type (docs/http.md, "Order of checks" and "Form posts"): JSON, or a form post whose fields
 * the built-in endpoints type and a named hook takes as strings. `json` is the JSON text, kept for a
 * named hook only: a transform's worker parses its own copy from it.
 */
export function parseBody(hook: string, contentType: string | undefined, body: Buffer): { payload: unknown; json: string | undefined } {
  const builtIn = isBuiltInHook(hook);
  const json = mediaKind(contentType) === 'json' ? jsonText(body) : undefined;
  const payload = json !== undefined ? parseJsonText(json) : builtIn ? parseForm(body) : parseNamedForm(body);
  return { payload, json: builtIn ? undefined : json };
}

/** Query parameters for templates and transforms: the first value of each, never the token. */
export function queryWithoutToken(q: URLSearchParams | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!q) return out;
  for (const [k, v] of q) if (k !== 'token' && !Object.hasOwn(out, k)) out[k] = v;
  return out;
}

/**
 * The URL as transforms see it and the request log keeps it: as sent (`search` is the raw text after
 * `?`), but without a `token` parameter (`hooks.allowQueryToken`).
 */
export function urlWithoutToken(path: string, query: URLSearchParams | undefined, search: string): string {
  if (!query) return path;
  if (!query.has('token')) return `${path}?${search}`;
  const q = new URLSearchParams(query);
  q.delete('token');
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
