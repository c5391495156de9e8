/**
 * The last step before dispatch: apply the safety boundary. `hook-intake try`
 * prints exactly these prepared actions, so what an operator sees in a dry run
 * is what the dispatcher stores.
 */
import { hash } from 'node:crypto';
import type { Action, AgentAction, DeliverAction, WakeAction } from './actions.ts';
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
  /** Most characters of hook content inside the boundary (a mapping's `maxChars`); the rest is cut and counted. */
  maxChars?: number | undefined;
}

export interface PreparedWake extends WakeAction {
  origin: string;
  /**
   * Its key for coalescing (docs/http.md, "Wake coalescing"): its origin and its text as sent, hashed, since
   * the stored text is wrapped in a boundary with a random id.
   */
  coalesceKey: string;
}
export interface PreparedAgent extends AgentAction {
  origin: string;
  label: string;
  trusted: boolean;
  nameTrusted: boolean;
}
/** A delivery without a model: no agent reads it, so it is not wrapped (its channel escapes what it must). */
export interface PreparedDeliver extends DeliverAction {
  origin: string;
}
export type PreparedAction = PreparedWake | PreparedAgent | PreparedDeliver;

export function prepare(action: Action, p: Provenance): PreparedAction {
  const wrap = (s: string) => {
    const content = p.maxChars === undefined ? s : cutContent(s, p.maxChars);
    return p.trusted ? content : wrapExternal(content, p.label, p.boundaryId);
  };
  if (action.kind === 'wake') return { ...action, text: wrap(action.text), origin: p.origin, coalesceKey: wakeKey(p.origin, action.text) };
  if (action.kind === 'deliver')
    return {
      ...action,
      name: cleanLabel(action.name),
      message: p.maxChars === undefined ? action.message : cutContent(action.message, p.maxChars),
      origin: p.origin,
    };
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

/** A wake's key for coalescing: the same origin and text give the same key. */
export function wakeKey(origin: string, text: string): string {
  return hash('sha256', `${origin}\n${text}`, 'base64url');
}

/**
 * Content past `max` characters cut at the last line or word break before it, with a last line saying
 * how many characters were left out (docs/mappings.md, "Events"); the agent knows the text is not whole.
 */
export function cutContent(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max;
  const nl = s.lastIndexOf('\n', max);
  const sp = s.lastIndexOf(' ', max);
  if (nl > max * 0.8) end = nl;
  else if (sp > max * 0.8) end = sp;
  // never between the two halves of a surrogate pair
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return `${s.slice(0, end).trimEnd()}\n[… ${(s.length - end).toLocaleString('en-US')} more characters not shown]`;
}
