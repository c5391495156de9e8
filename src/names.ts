/**
 * Names the product reserves: the hook names of the built-in endpoints (`/hooks/wake`,
 * `/hooks/agent`, which no mapping may take) and the key of the main session (which no request
 * may name). docs/http.md describes both endpoints.
 */

export type BuiltInHook = 'wake' | 'agent';

export const BUILT_IN_HOOKS: ReadonlySet<string> = new Set<BuiltInHook>(['wake', 'agent']);

export function isBuiltInHook(name: string): name is BuiltInHook {
  return name === 'wake' || name === 'agent';
}

/** The main session: its system events feed the heartbeat (docs/runtime.md). */
export const MAIN_SESSION = 'main';
