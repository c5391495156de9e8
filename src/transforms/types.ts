/**
 * Types for writing transforms. Import them type-only, so nothing needs to be
 * resolved at run time:
 *
 *   import type { TransformContext, TransformResult } from 'hook-intake/transform';
 *
 *   export default function (ctx: TransformContext<MyPayload>): TransformResult { … }
 *
 * See docs/transforms.md.
 */

/** What a transform is called with. Everything is plain data (copied into the transform's worker). */
export interface TransformContext<P = unknown, I = unknown> {
  /** The parsed JSON body. */
  payload: P;
  /** Request headers, lower-case names. Authorization and token headers are removed. */
  headers: Readonly<Record<string, string>>;
  /** Query parameters (never the token). */
  query: Readonly<Record<string, string>>;
  /** The hook name after the prefix, e.g. `github` for `POST /hooks/github`. */
  path: string;
  /** Request path and query string (without any token). */
  url: string;
  /** Request time, ISO 8601. */
  now: string;
  /** In a `forEach` mapping: the current element and its index. */
  item?: I;
  index?: number;
  /** The event type, when the mapping names one (`event`, as a preset does: `pull_request`, `invoice.paid`). */
  event?: string;
  /** What the mapping's templates produced for this request (or item), before the transform. */
  action: Readonly<PartialAction>;
}

export type WakeMode = 'now' | 'next-heartbeat';
export type Thinking = 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

/** Fields of a wake action. */
export interface PartialWake {
  kind: 'wake';
  text?: string;
  mode?: WakeMode;
}

/** Fields of an agent action. */
export interface PartialAgent {
  kind?: 'agent';
  message?: string;
  name?: string;
  sessionKey?: string;
  wakeMode?: WakeMode;
  deliver?: boolean;
  channel?: string;
  to?: string;
  model?: string;
  thinking?: Thinking;
  timeoutSeconds?: number;
}

/**
 * A partial action overrides the template result field by field; `kind`
 * switches between wake and agent (default: the mapping's `action`).
 */
export type PartialAction = PartialWake | PartialAgent;

/**
 * - an object: override the template result field by field
 * - `undefined`: keep the template result
 * - `null`: skip the request (the hook answers 204)
 * - an array: one action per element (fan-out); `null` elements are skipped
 */
export type TransformResult = PartialAction | (PartialAction | null)[] | null | undefined;

export type Transform<P = unknown, I = unknown> = (ctx: TransformContext<P, I>) => TransformResult | Promise<TransformResult>;
