/**
 * What the `gateway` provider sends: the fields of the hooks contract that mean the same on the
 * other side (docs/integrations.md, "What is sent").
 *
 * - `message` is the run's prompt as prepared here, in its safety boundary: only the new message,
 *   since the other gateway keeps its own transcript under the session key.
 * - `channel` and `to` of the run name this service's channels, which the other gateway does not
 *   know; it delivers to its own default unless the provider's config names one of its channels.
 */
import type { AgentRequest } from 'hook-intake/plugin';
import type { GatewayConfigValue } from './config.ts';

type Hook = NonNullable<AgentRequest['hook']>;

/** The new message: the last of the request's messages (the ones before it are this service's transcript). */
function newMessage(req: AgentRequest): string {
  return req.messages.at(-1)?.content ?? '';
}

/** The body of `POST <url>/agent` for a hook run. */
export function agentBody(config: GatewayConfigValue, req: AgentRequest, hook: Hook): Record<string, unknown> {
  const body: Record<string, unknown> = {
    message: newMessage(req),
    name: hook.name,
    wakeMode: hook.wakeMode,
    deliver: hook.deliver,
    timeoutSeconds: Math.max(1, Math.ceil(req.timeoutMs / 1000)),
  };
  if (config.sessionKey) body.sessionKey = req.sessionKey;
  if (config.channel !== undefined) body.channel = config.channel;
  if (config.to !== undefined) body.to = config.to;
  // `<id>/default` leaves the choice of model to the other gateway
  if (req.model !== 'default') body.model = req.model;
  if (req.thinking) body.thinking = req.thinking;
  return body;
}

/** The body of `POST <url>/wake` for a heartbeat: its prompt (the pending events), to be acted on at once. */
export function wakeBody(req: AgentRequest): Record<string, unknown> {
  return { text: newMessage(req), mode: 'now' };
}
