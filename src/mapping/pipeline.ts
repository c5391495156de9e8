/**
 * A compiled mapping: everything resolved at load (match predicates, parsed
 * templates, the confined transform file), frozen, so a request only runs
 * prepared closures: match → templates → transform → action(s) → dispatcher.
 */
import type { Matcher } from './match.ts';
import type { Template } from './template.ts';
import type { Segment } from './path.ts';
import type { Verifier } from '../plugins/define.ts';

/** Fields a mapping may template (docs/mappings.md, "Templates"). */
export const TEMPLATED_FIELDS = ['messageTemplate', 'textTemplate', 'name', 'sessionKey', 'to', 'model', 'thinking', 'agentId'] as const;
export type TemplatedField = (typeof TEMPLATED_FIELDS)[number];

export interface PipelineTransform {
  /** Key of the (file, export) pair in the generation's transform pool. */
  key: string;
  file: string;
  timeoutMs: number;
}

export interface Pipeline {
  readonly id: string;
  /** Where it was defined, for messages: `hooks.mappings[2]` or `preset gmail (mappings[0])`. */
  readonly origin: string;
  /** The preset it comes from, when it does. */
  readonly preset: string | undefined;
  /** `match.path` when the mapping names one (used to find signature-verified paths). */
  readonly path: string | undefined;
  readonly matcher: Matcher;
  readonly action: 'wake' | 'agent' | 'deliver';
  readonly forEach: { field: string; segs: readonly Segment[] } | undefined;
  readonly templates: Readonly<Partial<Record<TemplatedField, Template>>>;
  /** Non-templated settings copied from the mapping. */
  readonly statics: Readonly<{
    sessionMode?: 'persistent' | 'isolated';
    wakeMode?: 'now' | 'next-heartbeat';
    deliver?: boolean;
    channel?: string;
    timeoutSeconds?: number;
  }>;
  readonly transform: PipelineTransform | undefined;
  /** Source shown in the safety boundary; undefined means the rendered name, else the hook name. */
  readonly label: string | undefined;
  /** True when the mapping turns the safety boundary off (allowUnsafeExternalContent). */
  readonly trusted: boolean;
  readonly rateLimit: Readonly<{ max: number; perSeconds: number }> | undefined;
  /** When set, the provider signature is this hook's credential (the hook token is not enough). */
  readonly verify: Verifier | undefined;
  /** The verifier's type, for messages. */
  readonly verifyType: string | undefined;
  /** Names the request's event type (`event`), when the mapping says how. */
  readonly event: Template | undefined;
  /** The event types the mapping takes (`events`); another is skipped (204) with the reason. */
  readonly events: ReadonlySet<string> | undefined;
  /** Names the sender's delivery id (`idempotencyKey`), used as the idempotency key when it renders. */
  readonly idempotencyKey: Template | undefined;
  /** Most characters of hook content inside the boundary (`maxChars`); undefined: no cut. */
  readonly maxChars: number | undefined;
  /** Ids of the callbacks that also get this hook's events (`callbacks`: docs/callbacks.md). */
  readonly callbacks?: readonly string[] | undefined;
}

export const MAX_FAN_OUT = 200;

/** What a mapping reads of a request: its match rules, templates and transform see nothing else. */
export interface MappingInput {
  /** The hook name after the prefix, without surrounding `/`. */
  readonly name: string;
  readonly payload: unknown;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The first value of each query parameter, never the token. */
  readonly query: Readonly<Record<string, string>>;
  /** The request's URL without a `token` parameter. */
  readonly url: string;
  readonly receivedAt: number;
  /**
   * The body as the JSON text `payload` was parsed from (absent for a form post and for the built-in
   * endpoints). A transform's worker parses its own copy from it, which costs less than copying the
   * parsed object across threads.
   */
  readonly json?: string | undefined;
  /** The event type the mapping's `event` named, when it has one. */
  readonly event?: string | undefined;
}
