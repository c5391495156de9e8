/**
 * From an authenticated, parsed request to the prepared actions to dispatch.
 * Shared by the HTTP handler and `hook-intake try`, so a dry run shows exactly
 * what would be stored.
 */
import type { Generation } from './generation.ts';
import { DEFAULT_AGENT_NAME, toAgentAction, toWakeAction } from './actions.ts';
import { prepare, type PreparedAction } from './prepare.ts';
import { errors } from '../errors.ts';
import { boundaryId } from './safety.ts';

export interface HookRequest {
  /** The hook name after the prefix, without surrounding `/`. */
  name: string;
  payload: unknown;
  /** Lower-case header names. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  query: Readonly<Record<string, string>>;
  /** Full request path (without query string) and URL (query string redacted of tokens). */
  path: string;
  url: string;
  rawBody: Buffer;
  /**
   * The body as the JSON text `payload` was parsed from (absent for a form
   * post). A transform's worker parses its own copy from it, which costs less
   * than copying the parsed object across threads.
   */
  json?: string | undefined;
  receivedAt: number;
  /** True when a valid hook token came with the request (a signed hook may not need one). */
  authenticated: boolean;
}

export type Resolution =
  | { kind: 'actions'; actions: PreparedAction[]; mappingId?: string }
  | { kind: 'skip'; mappingId?: string };

/** Named-hook resolution (the mapping engine). */
export type NamedResolver = (gen: Generation, req: HookRequest, boundary: string) => Promise<Resolution>;

export const RESERVED_NAMES = new Set(['wake', 'agent']);

export async function resolveRequest(gen: Generation, req: HookRequest, named?: NamedResolver): Promise<Resolution> {
  const boundary = boundaryId();
  if (!req.authenticated && (req.name === 'wake' || req.name === 'agent')) throw errors.unauthorized();
  if (req.name === 'wake') {
    const action = toWakeAction(req.payload);
    return { kind: 'actions', actions: [prepare(action, { label: 'Webhook', origin: 'wake', trusted: false, nameTrusted: false, boundaryId: boundary })] };
  }
  if (req.name === 'agent') {
    const action = toAgentAction(req.payload, gen, 'request');
    // the caller's name is hook-supplied; only the default, a fixed word, may stand outside the boundary
    const nameTrusted = action.name === DEFAULT_AGENT_NAME;
    return { kind: 'actions', actions: [prepare(action, { label: 'Webhook', origin: 'agent', trusted: false, nameTrusted, boundaryId: boundary })] };
  }
  if (!named || !gen.pipelines.length) throw req.authenticated ? errors.hookNotFound(req.name) : errors.unauthorized();
  return named(gen, req, boundary);
}
