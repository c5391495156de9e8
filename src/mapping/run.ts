/**
 * Running a compiled pipeline for one request: templates → transform (in the generation's worker
 * pool) → drafts, one per action, each the template's fields with the transform's overrides. The
 * intake pipeline validates and prepares them (src/intake/resolve.ts), exactly like a direct
 * request's body. No draft at all is a skip (204).
 */
import type { Logger } from 'pino';
import { isCredentialHeader } from '../auth/credential-headers.ts';
import { errors, type HookError } from '../errors.ts';
import type { TransformCallError, TransformPool } from '../transforms/pool.ts';
import { getPath } from './path.ts';
import { MAX_FAN_OUT, type MappingInput, type Pipeline } from './pipeline.ts';
import type { Template, TemplateScope } from './template.ts';

/** The headers templates and transforms see: every one but the credentials (src/auth/credential-headers.ts). */
export function visibleHeaders(h: MappingInput['headers'], credentials: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(h)) {
    if (isCredentialHeader(k, credentials)) continue;
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
  if (both || p.action !== 'wake' || !t.textTemplate) {
    if (t.messageTemplate) out.message = t.messageTemplate(scope);
    else if (!deferBody) out.message = JSON.stringify(body);
  }
  // without its own template the text is the message (the rendered one, or the same JSON of the body)
  if (both || p.action === 'wake') {
    if (t.textTemplate) out.text = t.textTemplate(scope);
    else if (out.message !== undefined || !deferBody) out.text = out.message;
  }
  for (const f of ['name', 'sessionKey', 'to', 'model', 'thinking', 'agentId'] as const) {
    const tpl = t[f];
    if (!tpl) continue;
    const v = tpl(scope);
    if (v !== '') out[f] = v; // a template that renders empty falls back to the default
  }
  const s = p.statics;
  if (s.sessionMode !== undefined) out.sessionMode = s.sessionMode;
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

export interface RunDeps {
  logger: Logger;
  /** The generation's transform workers (absent when no mapping has a transform). */
  transforms: TransformPool | undefined;
  /** Header names that carry a credential beyond the common ones (`verify.header` of the generation's mappings). */
  credentialHeaders: ReadonlySet<string>;
}

/** A template over the request alone (a mapping's `event`, `idempotencyKey`), rendered as templates are. */
export function renderOverRequest(t: Template, req: MappingInput, credentials: ReadonlySet<string>): string {
  return t({
    name: req.name,
    now: new Date(req.receivedAt).toISOString(),
    headers: visibleHeaders(req.headers, credentials),
    query: req.query,
    payload: req.payload,
  });
}

/** One template scope per item of `forEach`, else the request's own. */
function templateScopes(p: Pipeline, req: MappingInput, headers: Record<string, string>): TemplateScope[] {
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

/** One action as the mapping made it: the templates' fields, and what the transform returned over them. */
export interface Draft {
  partial: Partial;
  overrides?: Partial;
}

/** The drafts of the mapping's actions for `req`; none when the mapping skips it (an empty `forEach`, a transform's null). */
export async function runPipeline(p: Pipeline, req: MappingInput, deps: RunDeps): Promise<Draft[]> {
  const headers = visibleHeaders(req.headers, deps.credentialHeaders);
  const scopes = templateScopes(p, req, headers);
  if (!scopes.length) return [];
  // a single context with the body's JSON text: the worker parses its own payload and computes body-JSON defaults on demand
  const sendText = p.transform !== undefined && !p.forEach && req.json !== undefined;
  const rendered = scopes.map((s) => renderTemplates(p, s, sendText));
  if (!p.transform) return rendered.map((partial) => ({ partial }));
  return transformed(p, req, { scopes, rendered, headers, sendText }, deps);
}

/** The mapping's transform called on each scope, its results merged over the templates' actions. */
async function transformed(
  p: Pipeline,
  req: MappingInput,
  input: { scopes: TemplateScope[]; rendered: Partial[]; headers: Record<string, string>; sendText: boolean },
  deps: RunDeps,
): Promise<Draft[]> {
  const { scopes, rendered, headers, sendText } = input;
  if (!deps.transforms || !p.transform) throw errors.internal(new Error('transform pool missing'));
  const contexts = scopes.map((s, i) => ({
    payload: sendText ? undefined : s.payload,
    headers,
    query: s.query,
    path: s.name,
    url: req.url,
    now: s.now,
    ...(p.forEach ? { item: s.item, index: s.index } : {}),
    ...(req.event !== undefined ? { event: req.event } : {}),
    action: rendered[i],
  }));
  const deferred = sendText ? deferredFields(rendered[0]!) : [];
  let results: unknown[];
  try {
    results = await deps.transforms.call(
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
function mergeResults(p: Pipeline, results: unknown[], rendered: Partial[], deps: RunDeps): Draft[] {
  const merged: Draft[] = [];
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
