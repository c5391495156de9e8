/**
 * `POST /api/requests/<id>/replay`: a kept request run again through the intake pipeline on the current
 * generation, as a new request with its headers and body would be, and kept again (marked `replayOf`).
 * The gateway token stands for the request's credential, which was never kept: a named hook's mapping is
 * the one whose `match` takes the request now, and its signature is not checked. An `Idempotency-Key` the
 * request carried is not applied, or the replay would get the first answer back (docs/console.md).
 */
import type { GenerationRef } from '../generation/ref.ts';
import { ownerWithoutCredential } from '../intake/credential.ts';
import type { Intake, IntakeAnswer } from '../intake/pipeline.ts';
import { type HookRequest, parseBody } from '../intake/request.ts';
import type { KeptRequest } from '../store/types.ts';

export interface ReplayDeps {
  generations: GenerationRef;
  intake: Intake;
  clock: () => number;
}

export function replayRequest(kept: KeptRequest, deps: ReplayDeps): Promise<IntakeAnswer> {
  return deps.generations.use(async (gen) => {
    const body = Buffer.from(kept.body.buffer, kept.body.byteOffset, kept.body.byteLength);
    const { payload, json } = parseBody(kept.hook, kept.headers['content-type'], body);
    const q = kept.url.indexOf('?');
    const req: HookRequest = {
      name: kept.hook,
      payload,
      headers: kept.headers,
      query: Object.fromEntries(q === -1 ? [] : new URLSearchParams(kept.url.slice(q + 1))),
      path: q === -1 ? kept.url : kept.url.slice(0, q),
      url: kept.url,
      rawBody: body,
      json,
      receivedAt: deps.clock(),
      authenticated: true,
      replayOf: kept.id,
    };
    return deps.intake.accept(gen, req, ownerWithoutCredential(gen, req), { idempotent: false });
  });
}
