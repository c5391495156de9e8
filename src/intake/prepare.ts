/**
 * The last step before dispatch: apply the safety boundary. `hook-intake try`
 * prints exactly these prepared actions, so what an operator sees in a dry run
 * is what the dispatcher stores.
 */
import type { Action, AgentAction, WakeAction } from './actions.ts';
import { cleanLabel, wrapExternal } from '../safety/boundary.ts';

export interface Provenance {
  /** Shown in the boundary: `Webhook`, `Email`, or a config-supplied name; never a hook-supplied string. */
  label: string;
  /** Event source id: `wake`, `agent`, or the mapping id. */
  origin: string;
  /** True when the mapping opted out of the boundary (allowUnsafeExternalContent). */
  trusted: boolean;
  /**
   * True when an agent action's name is config-supplied (a mapping's name without templates, the
   * path its `match.path` fixes) or a fixed word: only then may a summary show it outside the boundary.
   */
  nameTrusted: boolean;
  /** Random id shared by the markers of one request. */
  boundaryId: string;
}

export interface PreparedWake extends WakeAction {
  origin: string;
}
export interface PreparedAgent extends AgentAction {
  origin: string;
  label: string;
  trusted: boolean;
  nameTrusted: boolean;
}
export type PreparedAction = PreparedWake | PreparedAgent;

export function prepare(action: Action, p: Provenance): PreparedAction {
  const wrap = (s: string) => (p.trusted ? s : wrapExternal(s, p.label, p.boundaryId));
  if (action.kind === 'wake') return { ...action, text: wrap(action.text), origin: p.origin };
  return {
    ...action,
    name: cleanLabel(action.name),
    message: wrap(action.message),
    origin: p.origin,
    label: cleanLabel(p.label),
    trusted: p.trusted,
    nameTrusted: p.nameTrusted,
  };
}
