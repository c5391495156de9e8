/**
 * The callbacks of a generation, compiled once (docs/callbacks.md, "Config"): each one's URL parsed and
 * secret decoded, and which of them get an event of a given type from a given hook. A config with no
 * callbacks compiles to a plan that answers "none" without looking at anything.
 */
import type { CallbackConfig, CallbackType, Config } from '../config/schema.ts';
import type { ConfigIssue } from '../errors.ts';
import type { Pipeline } from '../mapping/pipeline.ts';
import { BUILT_IN_HOOKS } from '../names.ts';
import { didYouMean } from '../util/did-you-mean.ts';
import { callbackKey } from './sign.ts';

export interface CompiledCallback {
  readonly id: string;
  readonly url: URL;
  /** The secret's bytes, the HMAC key. */
  readonly key: Buffer;
  readonly allowPrivateNetwork: boolean;
}

export interface CallbackPlan {
  /** True when any callback takes `type`: without one, no event of that type is made. */
  wants(type: CallbackType): boolean;
  /** The callbacks that get an event of `type` from `hook` (`agent`, `wake`, a mapping id), in config order. */
  targets(hook: string, type: CallbackType): readonly CompiledCallback[];
  get(id: string): CompiledCallback | undefined;
}

/** Lookups kept: far more than a config's hooks times the four types. */
const MAX_CACHED = 1000;

const NONE: CallbackPlan = Object.freeze({ wants: () => false, targets: () => [], get: () => undefined });

interface Entry {
  callback: CompiledCallback;
  types: ReadonlySet<string>;
  /** Absent: every hook. */
  hooks: ReadonlySet<string> | undefined;
}

/** The plan of `config.callbacks` over the compiled `pipelines`; its problems go to `issues`. */
export function compileCallbacks(config: Config, pipelines: readonly Pipeline[], file: string, issues: ConfigIssue[]): CallbackPlan {
  const issue = (path: string, message: string) => issues.push({ file, path, message });
  const ids = config.callbacks.map((c) => c.id);
  checkMappingCallbacks(pipelines, ids, issue);
  if (!config.callbacks.length) return NONE;
  const hooks = [...BUILT_IN_HOOKS, ...pipelines.map((p) => p.id)];
  const entries: Entry[] = [];
  const seen = new Set<string>();
  config.callbacks.forEach((c, i) => {
    const at = `callbacks[${i}]`;
    if (seen.has(c.id)) issue(`${at}.id`, `duplicate callback id "${c.id}"`);
    seen.add(c.id);
    for (const [j, h] of (c.hooks ?? []).entries()) {
      if (hooks.includes(h)) continue;
      const hint = didYouMean(h, hooks);
      issue(`${at}.hooks[${j}]`, `"${h}" is not a hook: agent, wake or a mapping's id${hint ? ` (did you mean "${hint}"?)` : ''}`);
    }
    const made = compileOne(c, at, issue);
    if (made) entries.push({ callback: made, types: new Set(c.types), hooks: c.hooks ? new Set(c.hooks) : undefined });
  });
  return planOf(entries, mappingCallbacks(pipelines));
}

function compileOne(c: CallbackConfig, at: string, issue: (path: string, message: string) => void): CompiledCallback | undefined {
  let url: URL | undefined;
  try {
    url = new URL(c.url);
  } catch {
    issue(`${at}.url`, 'is not a URL');
  }
  if (url && (url.username || url.password)) issue(`${at}.url`, 'must not hold a user or password: the secret signs each event');
  const key = callbackKey(c.secret);
  if (typeof key === 'string') issue(`${at}.secret`, key);
  if (!url || typeof key === 'string') return undefined;
  return Object.freeze({ id: c.id, url, key, allowPrivateNetwork: c.allowPrivateNetwork });
}

/** A mapping's `callbacks` must name configured callbacks. */
function checkMappingCallbacks(pipelines: readonly Pipeline[], ids: string[], issue: (path: string, message: string) => void): void {
  for (const p of pipelines)
    for (const [j, id] of (p.callbacks ?? []).entries()) {
      if (ids.includes(id)) continue;
      const hint = didYouMean(id, ids);
      issue(`${p.origin}.callbacks[${j}]`, `no callback has the id "${id}"${hint ? ` (did you mean "${hint}"?)` : ''} (mapping "${p.id}")`);
    }
}

/** Mapping id → the callbacks it names. */
function mappingCallbacks(pipelines: readonly Pipeline[]): ReadonlyMap<string, ReadonlySet<string>> {
  const out = new Map<string, Set<string>>();
  for (const p of pipelines) if (p.callbacks?.length) out.set(p.id, new Set([...(out.get(p.id) ?? []), ...p.callbacks]));
  return out;
}

function planOf(entries: readonly Entry[], byMapping: ReadonlyMap<string, ReadonlySet<string>>): CallbackPlan {
  const wanted = new Set(entries.flatMap((e) => [...e.types]));
  const byId = new Map(entries.map((e) => [e.callback.id, e.callback]));
  // hooks are the config's and those of stored runs: a handful, each looked up once per type
  const cache = new Map<string, readonly CompiledCallback[]>();
  return Object.freeze({
    wants: (type: CallbackType) => wanted.has(type),
    get: (id: string) => byId.get(id),
    targets(hook: string, type: CallbackType) {
      if (!wanted.has(type)) return [];
      const k = `${type} ${hook}`;
      let list = cache.get(k);
      if (!list) {
        const named = byMapping.get(hook);
        list = entries
          .filter((e) => e.types.has(type) && (!e.hooks || e.hooks.has(hook) || named?.has(e.callback.id)))
          .map((e) => e.callback);
        if (cache.size >= MAX_CACHED) cache.clear();
        cache.set(k, list);
      }
      return list;
    },
  });
}
