/**
 * The keep policy: what of a hook request the request log keeps (docs/http.md, "Kept requests"), in the
 * same commit as what the request stores: the headers without credentials, the URL without a `token`
 * parameter, and the body as received, unless the owning mapping's verifier cuts a credential out of it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isCredentialHeader } from '../auth/credential-headers.ts';
import type { Generation } from '../generation/types.ts';
import type { Pipeline } from '../mapping/pipeline.ts';
import type { KeepRequest } from './dispatch.ts';
import type { HookRequest } from './request.ts';

/** The request to keep with what it stores; undefined when the request log is off (`retention.requestsDays: 0`). */
export function keptRequest(gen: Generation, req: HookRequest, owner: Pipeline | undefined): KeepRequest | undefined {
  if (gen.config.retention.requestsDays <= 0) return undefined;
  return {
    hook: req.name,
    mappingId: owner?.id ?? null,
    url: req.url,
    headers: keptHeaders(req.headers, gen.credentialHeaders),
    body: keptBody(owner, req),
    receivedAt: req.receivedAt,
    replayOf: req.replayOf ?? null,
  };
}

/** The body the request log keeps: as received, unless the owner's verifier takes a credential out of it. */
function keptBody(owner: Pipeline | undefined, req: HookRequest): Uint8Array {
  const keep = owner?.verify?.keptBody;
  return keep ? keep.call(owner.verify, req.rawBody, req.payload) : req.rawBody;
}

/** The headers to keep: every one but the credentials, a repeated one joined with `, `. */
export function keptHeaders(headers: IncomingHttpHeaders, extra: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const v = headers[name];
    if (v === undefined || isCredentialHeader(name, extra)) continue;
    out[name] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}
