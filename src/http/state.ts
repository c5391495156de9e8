/** What a request records for its log line (never payloads, tokens or signatures). */
export interface RequestState {
  hook?: string;
  mapping?: string;
  bytes?: number;
  runId?: string;
  eventId?: string;
}
