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
import { createRateLimiter } from './rate-limit.ts';

export function findPipeline(gen: Generation, req: Pick<HookRequest, 'name' | 'payload' | 'headers'>): Pipeline | undefined {
  const input = { name: req.name, payload: req.payload, headers: req.headers };
  for (const p of gen.pipelines) if (p.matcher.test(input)) return p;
  return undefined;
}

/**
 * The credential is checked against the mapping that owns the request: a
 * mapping with `verify` takes the provider signature (and only it), any other
 * mapping the hook token. An unauthenticated caller learns nothing about the
 * mappings: no match is 401 for it, not 404.
 */
export function createNamedResolver(deps: RunDeps): NamedResolver {
  const limiter = createRateLimiter();
  return async (gen, req, boundary) => {
    const p = findPipeline(gen, req);
    if (!p) throw req.authenticated ? errors.hookNotFound(req.name) : errors.unauthorized();
    if (p.verify) {
      const r = p.verify(req.headers, req.rawBody, req.receivedAt);
      if (!r.ok) {
        deps.logger.warn({ mapping: p.id, scheme: p.verifyType, reason: r.reason }, 'signature rejected');
        throw errors.invalidSignature();
      }
    } else if (!req.authenticated) throw errors.unauthorized();
    if (p.rateLimit) {
      const wait = limiter.take(p.id, p.rateLimit, req.receivedAt);
      if (wait !== undefined) throw errors.rateLimited(wait, `hook "${p.id}" takes at most ${p.rateLimit.max} requests per ${p.rateLimit.perSeconds}s`);
    }
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
