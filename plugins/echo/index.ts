/**
 * `echo`: the offline default agent provider. Its reply is exactly the prompt
 * it received (the last user message), so tests and new users can see what an
 * agent would see, safety boundary included. It reports usage as a model would,
 * estimated from lengths (docs/runtime.md, "echo"), so token budgets can be tried
 * without a model.
 */
import { definePlugin, Type, type AgentMessage } from 'hook-intake/plugin';

/** A quarter of the UTF-16 length, rounded up: the usual rough count of tokens in English text. */
const tokens = (length: number) => Math.ceil(length / 4);

const inputLength = (messages: readonly AgentMessage[]) => messages.reduce((n, m) => n + m.content.length, 0);

export default definePlugin({
  name: 'echo',
  agents: {
    echo: {
      configSchema: Type.Object({ type: Type.Literal('echo') }, { additionalProperties: false }),
      create: () => ({
        async run(req) {
          req.signal.throwIfAborted();
          const text = req.messages.findLast((m) => m.role === 'user')?.content ?? '';
          return { text, usage: { inputTokens: tokens(inputLength(req.messages)), outputTokens: tokens(text.length) } };
        },
      }),
    },
  },
});
