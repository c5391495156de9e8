/**
 * Named hooks: the first pipeline whose match passes owns the request
 * (SPEC §4.5). `explainMatch` is the same walk for `hook-intake try`, with the
 * reason each earlier pipeline did not match.
 */
import type { Generation } from '../generation/build.ts';
import type { HookRequest, NamedResolver } from '../intake/resolve.ts';
import { errors, type HookError } from '../errors.ts';
import { runPipeline, type RunDeps } from './run.ts';
import type { Pipeline } from './pipeline.ts';
import type { DirectAnswer } from '../plugins/define.ts';
import { createRateLimiter } from '../intake/rate-limit.ts';
import { LocalCounters } from '../store/local/counters.ts';
import type { Counters } from '../store/roles.ts';

export function findPipeline(gen: Generation, req: Pick<HookRequest, 'name' | 'payload' | 'headers'>): Pipeline | undefined {
  const input = { name: req.name, payload: req.payload, headers: req.headers };
  for (const p of gen.pipelines) if (p.matcher.test(input)) return p;
  return undefined;
}

/**
 * The credential is checked against the mapping that owns the request: a
 * mapping with `verify` takes the provider signature (and only it), any other
 * mapping the hook token. A caller without a valid credential learns nothing
 * about the mappings: no match is 401 for it, not 404. A caller whose
 * signature is valid for a mapping on the path holds that mapping's secret, so
 * when nothing matches it is told so (404), not that its credential is wrong.
 */
/** `counters`: the store's, for rate limits; counters of its own when absent (the dry run). */
export function createNamedResolver(deps: RunDeps & { counters?: Counters }): NamedResolver {
  const limiter = createRateLimiter(deps.counters ?? new LocalCounters());
  return {
    authorize(gen, req) {
      const p = findPipeline(gen, req);
      if (!p) {
        const signer = signedFor(gen, req);
        // a handshake (a ping, a URL check) is answered even when the mapping's match rules would not take its payload
        if (signer?.answer) {
          req.answer = signer.answer;
          return signer.pipeline;
        }
        throw noMatch(req, signer?.pipeline);
      }
      if (p.verify) {
        const r = p.verify.verify(req);
        if (!r.ok) {
          deps.logger.warn({ mapping: p.id, scheme: p.verifyType, reason: r.reason }, 'signature rejected');
          throw errors.invalidSignature();
        }
        if (r.answer) req.answer = r.answer;
      } else if (!req.authenticated) throw errors.unauthorized();
      return p;
    },
    async run(gen, req, p, boundary) {
      if (p.rateLimit) {
        const wait = await limiter.take(p.id, p.rateLimit, req.receivedAt);
        if (wait !== undefined)
          throw errors.rateLimited(wait, `hook "${p.id}" takes at most ${p.rateLimit.max} requests per ${p.rateLimit.perSeconds}s`);
      }
      return runPipeline(p, req, gen, boundary, deps);
    },
  };
}

/** The answer when no mapping matches: 404 for a caller with a valid token or signature, 401 for anyone else. */
function noMatch(req: HookRequest, signer: Pipeline | undefined): HookError {
  if (req.authenticated) return errors.hookNotFound(req.name);
  return signer ? errors.signedButUnmatched(req.name, signer.id) : errors.unauthorized();
}

/** The first mapping on the request's path whose signature the request carries validly, and its verifier's direct answer if any. */
function signedFor(gen: Generation, req: HookRequest): { pipeline: Pipeline; answer: DirectAnswer | undefined } | undefined {
  for (const p of gen.pipelines) {
    if (!p.verify || (p.path !== undefined && p.path !== req.name)) continue;
    const r = p.verify.verify(req);
    if (r.ok) return { pipeline: p, answer: r.answer };
  }
  return undefined;
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
