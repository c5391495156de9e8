/**
 * Running a compiled pipeline for one request: templates → transform (in the
 * generation's worker pool) → actions validated exactly like direct requests →
 * safety boundary. Returns prepared actions, or a skip (204).
 */
import type { Logger } from 'pino';
import type { Generation } from '../generation/build.ts';
import type { HookRequest, Resolution } from '../intake/resolve.ts';
import { agentFields, toAgentAction, toWakeAction, wakeFields, type Action } from '../intake/actions.ts';
import { prepare } from '../intake/prepare.ts';
import { errors, HookError } from '../errors.ts';
import { getPath } from './path.ts';
import type { TemplateScope } from './template.ts';
import { MAX_FAN_OUT, type Pipeline } from './pipeline.ts';
import type { TransformCallError } from '../transforms/pool.ts';

/** Headers a template or transform never sees: credentials. */
const HIDDEN_HEADERS = new Set(['authorization', 'x-gateway-token', 'cookie', 'proxy-authorization']);
const FIELDS_OF = { wake: new Set(['kind', ...wakeFields]), agent: new Set(['kind', ...agentFields]) } as const;
const ACTION_KEYS = new Set([...FIELDS_OF.wake, ...FIELDS_OF.agent]);

export function visibleHeaders(h: HookRequest['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(h)) {
    if (HIDDEN_HEADERS.has(k)) continue;
    const v = h[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

type Partial = Record<string, unknown>;

/**
 * The action the templates describe for one scope, with the defaults of docs/mappings.md, "A mapping". A
 * transform sees both `message` and `text`; without one, only the field the
 * action uses is rendered (a wake's text, an agent's message), so a wake
 * mapping does not serialise the whole payload for a message nobody reads.
 *
 * With `deferBody`, a `message` or `text` whose value would be the JSON of the
 * body is left out; the caller names them to the transform worker (which
 * computes them if the transform reads them) and fills in the ones the final
 * action needs (`fillDeferred`).
 */
export function renderTemplates(p: Pipeline, scope: TemplateScope, deferBody = false): Partial {
  const t = p.templates;
  const body = scope.item !== undefined ? scope.item : scope.payload;
  const out: Partial = { kind: p.action };
  const both = p.transform !== undefined;
  if (both || p.action === 'agent' || !t.textTemplate) {
    if (t.messageTemplate) out.message = t.messageTemplate(scope);
    else if (!deferBody) out.message = JSON.stringify(body);
  }
  // without its own template the text is the message (the rendered one, or the same JSON of the body)
  if (both || p.action === 'wake') {
    if (t.textTemplate) out.text = t.textTemplate(scope);
    else if (out.message !== undefined || !deferBody) out.text = out.message;
  }
  for (const f of ['name', 'sessionKey', 'to', 'model', 'thinking'] as const) {
    const tpl = t[f];
    if (!tpl) continue;
    const v = tpl(scope);
    if (v !== '') out[f] = v; // a template that renders empty falls back to the default
  }
  const s = p.statics;
  if (s.wakeMode !== undefined) out.wakeMode = s.wakeMode;
  if (s.deliver !== undefined) out.deliver = s.deliver;
  if (s.channel !== undefined) out.channel = s.channel;
  if (s.timeoutSeconds !== undefined) out.timeoutSeconds = s.timeoutSeconds;
  return out;
}

/** The fields `renderTemplates(…, true)` left out of `rendered` (their value is the JSON of the body). */
export function deferredFields(rendered: Partial): string[] {
  const out: string[] = [];
  if (!Object.hasOwn(rendered, 'message')) out.push('message');
  if (!Object.hasOwn(rendered, 'text')) out.push('text');
  return out;
}

/** Sets the deferred field the action needs (a wake's text, an agent's message) when the transform left it unset. */
function fillDeferred(partial: Partial, deferred: readonly string[], bodyJson: () => string): void {
  const field = partial.kind === 'wake' ? 'text' : 'message';
  if (partial[field] === undefined && deferred.includes(field)) partial[field] = bodyJson();
}

/** Turns a merged partial into a validated action (400 on failure, as for direct requests). */
export function toAction(partial: Partial, hookName: string, gen: Generation, overrides: Partial | undefined): Action {
  const kind = partial.kind;
  if (kind !== 'wake' && kind !== 'agent') throw errors.invalidPayload('kind', 'must be "wake" or "agent"');
  for (const k of Object.keys(overrides ?? {})) {
    if (!ACTION_KEYS.has(k)) throw errors.invalidPayload(k, 'unknown field in the action a transform returned');
    // a field of the other kind is a mistake in the transform (e.g. `text` on an agent action)
    if (!FIELDS_OF[kind].has(k)) throw errors.invalidPayload(k, `does not apply to a ${kind} action (the transform returned it)`);
  }
  if (kind === 'wake') {
    const input: Partial = { text: partial.text };
    const mode = partial.mode ?? partial.wakeMode;
    if (mode !== undefined) input.mode = mode;
    return toWakeAction(input);
  }
  const input: Partial = {};
  for (const f of agentFields) if (partial[f] !== undefined) input[f] = partial[f];
  if (input.name === undefined) input.name = hookName;
  return toAgentAction(input, gen, 'mapping');
}

export interface RunDeps {
  logger: Logger;
}

/** One template scope per item of `forEach`, else the request's own. */
function templateScopes(p: Pipeline, req: HookRequest, headers: Record<string, string>): TemplateScope[] {
  const base: TemplateScope = {
    name: req.name,
    now: new Date(req.receivedAt).toISOString(),
    headers,
    query: req.query,
    payload: req.payload,
  };
  if (!p.forEach) return [base];
  const list = getPath(req.payload, p.forEach.segs);
  if (!Array.isArray(list))
    throw errors.invalidPayload(p.forEach.field, `must be an array (mapping "${p.id}" has forEach: "${p.forEach.field}")`);
  if (list.length > MAX_FAN_OUT) throw errors.invalidPayload(p.forEach.field, `must have at most ${MAX_FAN_OUT} items`);
  return list.map((item, index) => ({ ...base, item, index }));
}

type Merged = { partial: Partial; overrides?: Partial };

export async function runPipeline(p: Pipeline, req: HookRequest, gen: Generation, boundary: string, deps: RunDeps): Promise<Resolution> {
  const headers = visibleHeaders(req.headers);
  const scopes = templateScopes(p, req, headers);
  if (!scopes.length) return { kind: 'skip', mappingId: p.id };
  // a single context with the body's JSON text: the worker parses its own payload and computes body-JSON defaults on demand
  const sendText = p.transform !== undefined && !p.forEach && req.json !== undefined;
  const rendered = scopes.map((s) => renderTemplates(p, s, sendText));
  const merged = p.transform
    ? await transformed(p, req, gen, { scopes, rendered, headers, sendText }, deps)
    : rendered.map((partial) => ({ partial }));
  if (!merged.length) return { kind: 'skip', mappingId: p.id };
  return { kind: 'actions', mappingId: p.id, actions: merged.map((m) => prepared(p, m, req, gen, boundary, deps)) };
}

/** The mapping's transform called on each scope, its results merged over the templates' actions. */
async function transformed(
  p: Pipeline,
  req: HookRequest,
  gen: Generation,
  input: { scopes: TemplateScope[]; rendered: Partial[]; headers: Record<string, string>; sendText: boolean },
  deps: RunDeps,
): Promise<Merged[]> {
  const { scopes, rendered, headers, sendText } = input;
  if (!gen.transforms || !p.transform) throw errors.internal(new Error('transform pool missing'));
  const contexts = scopes.map((s, i) => ({
    payload: sendText ? undefined : s.payload,
    headers,
    query: s.query,
    path: s.name,
    url: req.url,
    now: s.now,
    ...(p.forEach ? { item: s.item, index: s.index } : {}),
    action: rendered[i],
  }));
  const deferred = sendText ? deferredFields(rendered[0]!) : [];
  let results: unknown[];
  try {
    results = await gen.transforms.call(
      p.transform.key,
      contexts,
      p.transform.timeoutMs,
      sendText ? { json: req.json!, deferred } : undefined,
    );
  } catch (err) {
    const e = err as TransformCallError;
    deps.logger.error(
      { mapping: p.id, transform: p.transform.file, timedOut: e.timedOut ?? false, reason: e.detail ?? String(err), stack: e.stack },
      'transform failed',
    );
    throw errors.transformFailed(err);
  }
  const merged = mergeResults(p, results, rendered, deps);
  if (deferred.length) {
    let bodyJson: string | undefined;
    const json = () => (bodyJson ??= JSON.stringify(req.payload));
    for (const m of merged) fillDeferred(m.partial, deferred, json);
  }
  return merged;
}

/** A transform's results over the templates' actions: undefined keeps the action, null drops it, an object or array of objects overrides it. */
function mergeResults(p: Pipeline, results: unknown[], rendered: Partial[], deps: RunDeps): Merged[] {
  const merged: Merged[] = [];
  results.forEach((r, i) => {
    const tpl = rendered[i]!;
    if (r === undefined) merged.push({ partial: tpl });
    else if (r === null) return;
    else if (Array.isArray(r)) {
      for (const el of r) {
        if (el === null || el === undefined) continue;
        if (typeof el !== 'object' || Array.isArray(el)) throw badResult(p, deps, 'an array element that is not an object or null');
        merged.push({ partial: override(tpl, el as Partial), overrides: el as Partial });
      }
    } else if (typeof r === 'object') merged.push({ partial: override(tpl, r as Partial), overrides: r as Partial });
    else throw badResult(p, deps, `a ${typeof r}`);
  });
  if (merged.length > MAX_FAN_OUT) throw badResult(p, deps, `${merged.length} actions (at most ${MAX_FAN_OUT})`);
  return merged;
}

/** One merged action checked and prepared for dispatch (its boundary, label and trust). */
function prepared(p: Pipeline, { partial, overrides }: Merged, req: HookRequest, gen: Generation, boundary: string, deps: RunDeps) {
  let a: Action;
  try {
    a = toAction(partial, req.name, gen, overrides);
  } catch (err) {
    if (err instanceof HookError) deps.logger.info({ mapping: p.id, code: err.code, field: err.field }, 'mapped action refused');
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
  });
}

/**
 * Whether an agent action's name comes from the config: the mapping's `name` without templates, or,
 * without a rendered name, the hook name, when the mapping's `match.path` fixes it. A templated name,
 * one a transform returned, and the hook name of a mapping that matches any path are hook-supplied.
 */
function nameFromConfig(p: Pipeline, partial: Partial, overrides: Partial | undefined): boolean {
  if (overrides?.name !== undefined) return false;
  if (partial.name !== undefined) return p.templates.name?.isStatic === true;
  return p.path !== undefined;
}

/** The template result overridden field by field; a field set to `undefined` keeps the template value, like an absent one. */
function override(tpl: Partial, over: Partial): Partial {
  const out = { ...tpl, ...over };
  for (const k of Object.keys(over)) if (over[k] === undefined && Object.hasOwn(tpl, k)) out[k] = tpl[k];
  return out;
}

function badResult(p: Pipeline, deps: RunDeps, what: string): HookError {
  deps.logger.error({ mapping: p.id, transform: p.transform?.file }, `transform returned ${what}`);
  return errors.transformFailed(new Error(`the transform returned ${what}`));
}
