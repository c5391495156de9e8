/**
 * `POST /api/requests/<id>/replay`: a kept request run again through the current generation, as a new
 * request with its headers and body would be, and kept again (marked `replayOf`). The gateway token stands
 * for the request's credential, which was never kept: a named hook's mapping is the one whose `match`
 * takes the request now, and its signature is not checked. An `Idempotency-Key` the request carried is
 * not applied, or the replay would get the first answer back.
 */
import { errors } from '../errors.ts';
import type { DispatchResult, Dispatcher } from '../intake/dispatch.ts';
import type { GenerationRef } from '../generation/build.ts';
import { resolveRequest, type HookRequest, type NamedResolver } from '../intake/resolve.ts';
import { findPipeline } from '../mapping/resolve.ts';
import type { KeptRequest } from '../store/types.ts';
import { credentialHeaders, keptHeaders } from '../intake/keep.ts';
import { jsonText, mediaKind, parseForm, parseJsonText, parseNamedForm } from '../intake/parse.ts';

export interface ReplayDeps {
  generations: GenerationRef;
  dispatcher: Dispatcher;
  named?: NamedResolver | undefined;
  clock: () => number;
}

export type ReplayAnswer = Pick<DispatchResult, 'status' | 'body' | 'requestId'>;

export async function replayRequest(kept: KeptRequest, deps: ReplayDeps): Promise<ReplayAnswer> {
  const gen = deps.generations.acquire();
  try {
    const hc = gen.config.hooks;
    const body = Buffer.from(kept.body.buffer, kept.body.byteOffset, kept.body.byteLength);
    const reserved = kept.hook === 'wake' || kept.hook === 'agent';
    const json = mediaKind(kept.headers['content-type']) === 'json' ? jsonText(body) : undefined;
    const payload = json !== undefined ? parseJsonText(json) : reserved ? parseForm(body) : parseNamedForm(body);
    const q = kept.url.indexOf('?');
    const query = Object.fromEntries(q === -1 ? [] : new URLSearchParams(kept.url.slice(q + 1)));
    const now = deps.clock();
    const req: HookRequest = {
      name: kept.hook,
      payload,
      headers: kept.headers,
      query,
      path: q === -1 ? kept.url : kept.url.slice(0, q),
      url: kept.url,
      rawBody: body,
      json: reserved ? undefined : json,
      receivedAt: now,
      authenticated: true,
    };
    let owner;
    if (!reserved) {
      if (!deps.named) throw errors.hookNotFound(kept.hook);
      owner = findPipeline(gen, req);
      if (!owner) throw errors.hookNotFound(kept.hook);
    }
    const resolution = await resolveRequest(gen, req, deps.named, owner);
    const keep =
      gen.config.retention.requestsDays > 0
        ? {
            hook: kept.hook,
            mappingId: owner?.id ?? null,
            url: kept.url,
            headers: keptHeaders(kept.headers, credentialHeaders(gen)),
            body,
            receivedAt: now,
            replayOf: kept.id,
          }
        : undefined;
    if (resolution.kind === 'skip') {
      const requestId = keep ? await deps.dispatcher.keepSkipped(keep) : undefined;
      return { status: 204, body: {}, ...(requestId ? { requestId } : {}) };
    }
    return await deps.dispatcher.dispatch(resolution.actions, {
      agentStatus: hc.agentStatus,
      maxQueuedRuns: hc.maxQueuedRuns,
      ...(keep ? { keep } : {}),
    });
  } finally {
    deps.generations.release(gen);
  }
}
