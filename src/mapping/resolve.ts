/**
 * Named hooks: the first pipeline whose match passes owns the request
 * (SPEC §4.5). `explainMatch` is the same walk for `hook-intake try`, with the
 * reason each earlier pipeline did not match.
 */
import type { Generation } from '../runtime/generation.ts';
import type { HookRequest, NamedResolver } from '../runtime/intake.ts';
import { errors } from '../errors.ts';
import { runPipeline, type RunDeps } from './run.ts';
import type { Pipeline } from './pipeline.ts';

export function findPipeline(gen: Generation, req: Pick<HookRequest, 'name' | 'payload' | 'headers'>): Pipeline | undefined {
  const input = { name: req.name, payload: req.payload, headers: req.headers };
  for (const p of gen.pipelines) if (p.matcher.test(input)) return p;
  return undefined;
}

export function createNamedResolver(deps: RunDeps): NamedResolver {
  return async (gen, req, boundary) => {
    const p = findPipeline(gen, req);
    if (!p) throw errors.hookNotFound(req.name);
    return runPipeline(p, req, gen, boundary, deps);
  };
}

export interface MatchExplanation {
  id: string;
  origin: string;
  matched: boolean;
  /** Why it did not match (undefined for the one that did). */
  reason?: string;
}

/** Walks the pipelines in order up to the first match, saying why each earlier one failed. */
export function explainMatch(gen: Generation, req: Pick<HookRequest, 'name' | 'payload' | 'headers'>): MatchExplanation[] {
  const input = { name: req.name, payload: req.payload, headers: req.headers };
  const out: MatchExplanation[] = [];
  for (const p of gen.pipelines) {
    const reason = p.matcher.explain(input);
    if (reason === undefined) {
      out.push({ id: p.id, origin: p.origin, matched: true });
      break;
    }
    out.push({ id: p.id, origin: p.origin, matched: false, reason });
  }
  return out;
}
