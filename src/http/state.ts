import type { ApiCaller } from '../auth/bearer.ts';
import type { HookRequest } from '../intake/request.ts';

/** What a request records for its log line (never payloads, tokens or signatures). */
export interface RequestState {
  hook?: string;
  mapping?: string;
  bytes?: number;
  runId?: string;
  eventId?: string;
  /** Who called the read API (not logged). */
  caller?: ApiCaller;
  /** The hook request as the listener built it, and whether its credential passed (not logged: for the request log of refusals). */
  request?: HookRequest;
  credentialPassed?: boolean;
  /** The hook name a request asked for, before its credential is checked (`hook` is set after: it labels metrics). */
  asked?: string;
}
