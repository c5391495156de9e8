/**
 * `echo`: the offline default agent provider. Its reply is exactly the prompt
 * it received (the last user message), so tests and new users can see what an
 * agent would see, safety boundary included.
 */
import { definePlugin, Type } from 'hook-intake/plugin';

export default definePlugin({
  name: 'echo',
  agents: {
    echo: {
      configSchema: Type.Object({ type: Type.Literal('echo') }, { additionalProperties: false }),
      create: () => ({
        async run(req) {
          req.signal.throwIfAborted();
          const last = req.messages.findLast((m) => m.role === 'user');
          return { text: last?.content ?? '' };
        },
      }),
    },
  },
});
