/**
 * A plugin instance's way into the dispatcher (`ctx.dispatch`): its actions
 * take the path of a hook request's, on the generation live at that moment.
 * Each is validated like a `/hooks/wake` or `/hooks/agent` body, wrapped in
 * the safety boundary labelled with the instance's config id (a plugin relays
 * content from outside: chat messages, mail), and stored before the promise
 * resolves.
 */
import type { PluginAction } from '../plugins/define.ts';
import { errors } from '../errors.ts';
import { toAgentAction, toWakeAction } from './actions.ts';
import type { Dispatcher } from './dispatch.ts';
import type { GenerationRef } from '../generation/ref.ts';
import type { Held, Submit } from '../generation/instances.ts';
import { prepare, type PreparedAction } from './prepare.ts';
import { boundaryId } from '../safety/boundary.ts';

function prepareAll(actions: readonly PluginAction[], held: Held, gen: ReturnType<GenerationRef['acquire']>): PreparedAction[] {
  if (!Array.isArray(actions) || actions.length === 0) throw errors.invalidPayload('', 'dispatch takes a non-empty list of actions');
  const boundary = boundaryId();
  const provenance = { label: held.id, origin: `${held.kind}:${held.id}`, trusted: false, nameTrusted: false, boundaryId: boundary };
  return actions.map((a, i) => {
    const { kind, ...body } = (a ?? {}) as PluginAction;
    if (kind === 'wake') return prepare(toWakeAction(body), provenance);
    if (kind === 'agent') return prepare(toAgentAction(body, gen, 'mapping'), provenance);
    throw errors.invalidPayload(`[${i}].kind`, 'must be "wake" or "agent"');
  });
}

export function createSubmit(generations: GenerationRef, dispatcher: Dispatcher): Submit {
  return (held, actions) =>
    generations.use(async (gen) => {
      const prepared = prepareAll(actions, held, gen);
      const hc = gen.config.hooks;
      return dispatcher.dispatch(prepared, { agentStatus: hc.agentStatus, maxQueuedRuns: hc.maxQueuedRuns });
    });
}
