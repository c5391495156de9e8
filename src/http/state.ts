import type { ApiCaller } from '../auth/bearer.ts';

/** What a request records for its log line (never payloads, tokens or signatures). */
export interface RequestState {
  hook?: string;
  mapping?: string;
  bytes?: number;
  runId?: string;
  eventId?: string;
  /** Who called the read API (not logged). */
  caller?: ApiCaller;
}
