/**
 * Which agent an agent action runs on, and with which model (docs/agents.md): the agent a request or
 * mapping names (`agentId`), if `hooks.allowedAgentIds` lets it, else the default agent; the model it
 * names, if its provider is configured and the agent's `models` take it, else the agent's own.
 * Refusals name the field and what is configured, never the value sent.
 */
import { splitModel } from '../config/rules.ts';
import { errors } from '../errors.ts';
import type { Agent } from '../generation/agents.ts';
import type { Generation } from '../generation/types.ts';

export function chooseAgent(gen: Generation, agentId: string | undefined): Agent {
  const { agents } = gen;
  if (agentId === undefined) return agents.byId.get(agents.defaultId)!;
  const agent = agents.byId.get(agentId);
  if (!agent) throw errors.invalidPayload('agentId', `names no agent; agents: ${[...agents.byId.keys()].join(', ')}`);
  if (agents.allowed && !agents.allowed.has(agentId))
    throw errors.invalidPayload(
      'agentId',
      agents.allowed.size
        ? `names an agent hooks may not choose; allowed: ${[...agents.allowed].join(', ')}`
        : 'is not accepted: hooks.allowedAgentIds is []',
    );
  return agent;
}

export function chooseModel(gen: Generation, agent: Agent, model: string | undefined): string {
  if (model === undefined) return agent.model;
  const parts = splitModel(model);
  if (!parts) throw errors.invalidPayload('model', 'must have the form provider/model');
  // the request's own value is not repeated (an error answer never echoes what was sent)
  if (!gen.providers.has(parts.provider))
    throw errors.invalidPayload('model', `names a provider that is not configured; configured: ${[...gen.providers.keys()].join(', ')}`);
  if (agent.models && !agent.models.has(model))
    throw errors.modelNotAllowed(gen.config.agents.list?.find((a) => a.id === agent.id)?.models ? agent.id : undefined);
  return model;
}
