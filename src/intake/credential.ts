/**
 * The credential step (docs/http.md, "Authentication"): the hook token for the built-in endpoints;
 * for a named hook, the credential of the mapping that owns it — its provider signature when it has
 * `verify` (and only that), the hook token otherwise. Nothing stored is read here, so a caller learns
 * nothing derived from stored state (an idempotent repeat's first answer) before its credential passed.
 */
import type { Logger } from 'pino';
import { errors, type HookError } from '../errors.ts';
import type { Generation } from '../generation/types.ts';
import { findPipeline } from '../mapping/find.ts';
import type { Pipeline } from '../mapping/pipeline.ts';
import { isBuiltInHook } from '../names.ts';
import type { DirectAnswer } from '../plugins/define.ts';
import type { HookRequest } from './request.ts';

/**
 * The mapping that owns the request (undefined for a built-in endpoint), its credential checked; throws
 * 401 or 404. A verifier's own answer (a provider's URL check) is set on `req.answer`. A caller without a
 * valid credential learns nothing about the mappings: no match is 401 for it, not 404. A caller whose
 * signature is valid for a mapping on the path holds that mapping's secret, so when nothing matches it
 * is told so (404), not that its credential is wrong.
 */
export function authorize(gen: Generation, req: HookRequest, logger: Logger): Pipeline | undefined {
  if (isBuiltInHook(req.name)) {
    if (!req.authenticated) throw errors.unauthorized();
    return undefined;
  }
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
      logger.warn({ mapping: p.id, scheme: p.verifyType, reason: r.reason }, 'signature rejected');
      throw errors.invalidSignature();
    }
    if (r.answer) req.answer = r.answer;
  } else if (!req.authenticated) throw errors.unauthorized();
  return p;
}

/**
 * The owner of a request an operator runs again with the gateway token (a replay, a dry run that skips
 * signatures): the mapping whose `match` takes it now, its signature not checked (it was never kept).
 */
export function ownerWithoutCredential(gen: Generation, req: HookRequest): Pipeline | undefined {
  if (isBuiltInHook(req.name)) return undefined;
  const p = findPipeline(gen, req);
  if (!p) throw errors.hookNotFound(req.name);
  return p;
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

/**
 * The mapping that answers a `GET` to a named hook, a provider's subscription handshake (Meta's
 * `hub.challenge`): the first that may own `name` (its `match.path` is the name, or it has none) whose
 * verifier answers handshakes. Its other match rules are not applied: a handshake has no payload.
 */
export function handshakeOwner(gen: Generation, name: string): Pipeline | undefined {
  if (!name || isBuiltInHook(name)) return undefined;
  return gen.pipelines.find((p) => typeof p.verify?.handshake === 'function' && (p.path === undefined || p.path === name));
}
