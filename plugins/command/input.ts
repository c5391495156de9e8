/**
 * What the program reads on standard input, by `input` mode:
 *
 * - `transcript` (default): the new message alone on a session's first turn;
 *   later, the earlier turns as labelled plain text, then the new message, so
 *   a stateless CLI still continues the conversation.
 * - `message`: only the new message (for programs that keep their own
 *   history, keyed by `HOOK_INTAKE_SESSION_KEY`).
 * - `json`: one JSON object `{runId, sessionKey, model, thinking, instructions, messages}`.
 *
 * The agent's instructions, when it has some, come first in the text modes, under a line saying so.
 */
import type { AgentRequest } from 'hook-intake/plugin';

export function renderInput(mode: 'transcript' | 'message' | 'json', req: AgentRequest): string {
  if (mode === 'json') {
    const { runId, sessionKey, model, thinking, instructions, messages } = req;
    return `${JSON.stringify({ runId, sessionKey, model, thinking, instructions: instructions ?? null, messages })}\n`;
  }
  const head = req.instructions ? `Your instructions:\n\n${req.instructions}\n\n` : '';
  const last = req.messages.at(-1);
  const current = last?.content ?? '';
  const earlier = req.messages.slice(0, -1);
  if (mode === 'message' || !earlier.length) return `${head}${current}`;
  const turns = earlier.map((m) => `[${m.role}]\n${m.content}`).join('\n\n');
  return `${head}The conversation so far, oldest first:\n\n${turns}\n\nThe new message:\n\n${current}`;
}

/** Replaces `{model}`, `{sessionKey}`, `{runId}`, `{thinking}` in one argv item. */
export function fillArg(arg: string, req: AgentRequest): string {
  return arg.replace(/\{(model|sessionKey|runId|thinking)\}/g, (_m, k: string) =>
    k === 'model' ? req.model : k === 'sessionKey' ? req.sessionKey : k === 'runId' ? req.runId : (req.thinking ?? ''),
  );
}
