/**
 * The event step (docs/mappings.md, "Events"): names the request's event type when its mapping says
 * how (`event`, as a preset does), for the transform (`ctx.event`), and says why the request is
 * skipped when the mapping's `events` do not take it.
 */
import type { Generation } from '../generation/types.ts';
import type { Pipeline } from '../mapping/pipeline.ts';
import { renderOverRequest } from '../mapping/run.ts';
import type { HookRequest } from './request.ts';

/** Sets `req.event`; returns the reason to skip the request, or undefined to go on. */
export function eventStep(gen: Generation, req: HookRequest, owner: Pipeline): string | undefined {
  const event = renderOverRequest(owner.event!, req, gen.credentialHeaders).trim();
  req.event = event;
  if (owner.events && !owner.events.has(event)) return event ? `event "${cut(event)}" is not in events` : 'the request names no event type';
  return undefined;
}

const cut = (s: string) => (s.length > 100 ? `${s.slice(0, 100)}…` : s);
