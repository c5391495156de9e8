/**
 * The resolve step: a request whose credential passed, as the actions to store — the body of a built-in
 * endpoint, or the drafts of the mapping that owns it (match → templates → transform), each validated
 * exactly like a direct request's body and wrapped in the safety boundary — or a skip (204).
 */
import type { Logger } from 'pino';
import { HookError } from '../errors.ts';
import type { Generation } from '../generation/types.ts';
import type { Pipeline } from '../mapping/pipeline.ts';
import { type Draft, runPipeline } from '../mapping/run.ts';
import { boundaryId } from '../safety/boundary.ts';
import { type Action, DEFAULT_AGENT_NAME, toAgentAction, toMappedAction, toWakeAction } from './actions.ts';
import { type PreparedAction, prepare } from './prepare.ts';
import type { HookRequest } from './request.ts';

export type Resolution = { kind: 'actions'; actions: PreparedAction[] } | { kind: 'skip'; reason: string };

const SKIP: Resolution = {
  kind: 'skip',
  reason: 'the mapping produced no action (the transform returned null, or forEach found no items)',
};

/** `owner` is the mapping the credential step found (undefined for `/wake` and `/agent`). */
export async function resolve(gen: Generation, req: HookRequest, owner: Pipeline | undefined, logger: Logger): Promise<Resolution> {
  const boundary = boundaryId();
  if (!owner) return { kind: 'actions', actions: [builtIn(gen, req, boundary)] };
  const drafts = await runPipeline(owner, req, { logger, transforms: gen.transforms, credentialHeaders: gen.credentialHeaders });
  if (!drafts.length) return SKIP;
  return { kind: 'actions', actions: drafts.map((d) => preparedDraft(owner, d, req.name, gen, boundary, logger)) };
}

/** The body of `/wake` or `/agent` as its action; the source shown in the boundary is `Webhook`. */
function builtIn(gen: Generation, req: HookRequest, boundary: string): PreparedAction {
  if (req.name === 'wake')
    return prepare(toWakeAction(req.payload), {
      label: 'Webhook',
      origin: 'wake',
      trusted: false,
      nameTrusted: false,
      boundaryId: boundary,
    });
  const action = toAgentAction(req.payload, gen, 'request');
  // the caller's name is hook-supplied; only the default, a fixed word, may stand outside the boundary
  const nameTrusted = action.name === DEFAULT_AGENT_NAME;
  return prepare(action, { label: 'Webhook', origin: 'agent', trusted: false, nameTrusted, boundaryId: boundary });
}

/** One draft of a mapping checked and prepared for dispatch (its boundary, label and trust). */
function preparedDraft(p: Pipeline, { partial, overrides }: Draft, hook: string, gen: Generation, boundary: string, logger: Logger) {
  let a: Action;
  try {
    a = toMappedAction(partial, hook, gen, overrides);
  } catch (err) {
    if (err instanceof HookError) logger.info({ mapping: p.id, code: err.code, field: err.field }, 'mapped action refused');
    throw err;
  }
  const nameTrusted = a.kind === 'agent' && nameFromConfig(p, partial, overrides);
  return prepare(a, {
    // never a hook-supplied name: it would stand in the notice, outside the markers
    label: p.label ?? (a.kind === 'agent' && nameTrusted ? a.name : (p.path ?? 'Webhook')),
    origin: p.id,
    trusted: p.trusted,
    nameTrusted,
    boundaryId: boundary,
    maxChars: p.maxChars,
  });
}

/**
 * Whether an agent action's name comes from the config: the mapping's `name` without templates, or,
 * without a rendered name, the hook name, when the mapping's `match.path` fixes it. A templated name,
 * one a transform returned, and the hook name of a mapping that matches any path are hook-supplied.
 */
function nameFromConfig(p: Pipeline, partial: Draft['partial'], overrides: Draft['overrides']): boolean {
  if (overrides?.name !== undefined) return false;
  if (partial.name !== undefined) return p.templates.name?.isStatic === true;
  return p.path !== undefined;
}
