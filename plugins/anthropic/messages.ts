/**
 * A run's transcript as the Messages API takes it (docs/providers/anthropic.md, "What is sent"). The API
 * has no system turns (instructions go in the top-level `system`), refuses text that is empty or only
 * whitespace, and is built for alternating user and assistant turns, starting with the user's.
 */
import type { AgentMessage } from 'hook-intake/plugin';

export interface Turn {
  role: 'user' | 'assistant';
  content: string;
}

export interface MessagesPart {
  /** Absent when there is no system text. */
  system?: string;
  messages: Turn[];
}

const BLANK_LINE = '\n\n';

/**
 * `system`: the parts given (the agent's instructions or the provider's `systemPrompt`) and then any system
 * messages of the transcript, in order, joined by blank lines. `messages`: the user and assistant messages
 * with text, a run of one role merged into one turn (joined by blank lines), and the assistant turns before
 * the first user turn dropped (a transcript window can begin with a reply whose prompt fell out of it).
 */
export function toMessages(transcript: readonly AgentMessage[], systemParts: readonly (string | undefined)[]): MessagesPart {
  const system = systemParts.filter((s): s is string => s !== undefined && s.trim() !== '');
  const messages: Turn[] = [];
  for (const m of transcript) {
    if (!m.content.trim()) continue;
    if (m.role === 'system') {
      system.push(m.content);
      continue;
    }
    const last = messages.at(-1);
    if (last?.role === m.role) last.content += BLANK_LINE + m.content;
    else if (last || m.role === 'user') messages.push({ role: m.role, content: m.content });
  }
  return system.length ? { system: system.join(BLANK_LINE), messages } : { messages };
}
