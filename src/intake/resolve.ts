/**
 * From an authenticated, parsed request to the prepared actions to dispatch.
 * Shared by the HTTP handler and `hook-intake try`, so a dry run shows exactly
 * what would be stored.
 */
import type { Generation } from '../generation/build.ts';
import { DEFAULT_AGENT_NAME, toAgentAction, toWakeAction } from './actions.ts';
import { prepare, type PreparedAction } from './prepare.ts';
import { errors } from '../errors.ts';
import { boundaryId } from '../safety/boundary.ts';
import type { Pipeline } from '../mapping/pipeline.ts';
import type { DirectAnswer } from '../plugins/define.ts';

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
  /** Set when the owning mapping's verifier answers the request itself (a handshake): nothing is run or stored. */
  answer?: DirectAnswer;
}

export type Resolution = { kind: 'actions'; actions: PreparedAction[]; mappingId?: string } | { kind: 'skip'; mappingId?: string };

/**
 * Named-hook resolution (the mapping engine), in two steps: `authorize` finds
 * the mapping that owns the request and checks its credential, reading nothing
 * stored, so a caller learns nothing derived from stored state (an idempotent
 * repeat's first answer) before its credential has passed; `run` then turns
 * the request into actions.
 */
export interface NamedResolver {
  /** The owning mapping, its credential checked; 401 or 404 otherwise. */
  authorize(gen: Generation, req: HookRequest): Pipeline;
  run(gen: Generation, req: HookRequest, owner: Pipeline, boundary: string): Promise<Resolution>;
}

export const RESERVED_NAMES = new Set(['wake', 'agent']);

/**
 * Checks the request's credential: the hook token for the built-in endpoints,
 * the owning mapping's credential for a named hook (returned, so it is matched
 * once). Throws 401 or 404.
 */
export function authorizeRequest(gen: Generation, req: HookRequest, named?: NamedResolver): Pipeline | undefined {
  if (req.name === 'wake' || req.name === 'agent') {
    if (!req.authenticated) throw errors.unauthorized();
    return undefined;
  }
  if (!named || !gen.pipelines.length) throw req.authenticated ? errors.hookNotFound(req.name) : errors.unauthorized();
  return named.authorize(gen, req);
}

/** `owner` is what `authorizeRequest` returned, when the caller checked the credential first. */
export async function resolveRequest(
  gen: Generation,
  req: HookRequest,
  named?: NamedResolver,
  owner = authorizeRequest(gen, req, named),
): Promise<Resolution> {
  const boundary = boundaryId();
  if (req.name === 'wake') {
    const action = toWakeAction(req.payload);
    return {
      kind: 'actions',
      actions: [prepare(action, { label: 'Webhook', origin: 'wake', trusted: false, nameTrusted: false, boundaryId: boundary })],
    };
  }
  if (req.name === 'agent') {
    const action = toAgentAction(req.payload, gen, 'request');
    // the caller's name is hook-supplied; only the default, a fixed word, may stand outside the boundary
    const nameTrusted = action.name === DEFAULT_AGENT_NAME;
    return {
      kind: 'actions',
      actions: [prepare(action, { label: 'Webhook', origin: 'agent', trusted: false, nameTrusted, boundaryId: boundary })],
    };
  }
  return named!.run(gen, req, owner!, boundary);
}
