/**
 * Session keys made for a run. A request or mapping that names no session key gets a new session,
 * `hook:<id>`, and its run gets the same `<id>` (the dispatcher): the key then says which run
 * started the session. The store keeps that run's message and reply, the session's first two
 * lines, in the run's own row instead of two transcript rows (`SqliteStore.finishRun`), and finds
 * them again from the key when a later run of the session, or the API, reads the transcript.
 */

/** A session key made for a run is this prefix and the run's id. */
export const OWN_SESSION_PREFIX = 'hook:';

// the ids this service makes: UUIDv7, lowercase (util/uuid7.ts)
const OWN_SESSION = /^hook:([0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})$/;

/** The id of the run a session key was made for; undefined for any other key. */
export function ownSessionRunId(sessionKey: string): string | undefined {
  return OWN_SESSION.exec(sessionKey)?.[1];
}
