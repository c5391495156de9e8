/**
 * `console`: a channel that prints each delivered reply to the service's
 * standard output (or standard error), for local use and demos.
 */
import { definePlugin, Type, type Static } from 'hook-intake/plugin';

const ConsoleConfig = Type.Object(
  {
    type: Type.Optional(Type.Literal('console')),
    stream: Type.Union([Type.Literal('stdout'), Type.Literal('stderr')], { default: 'stdout' }),
  },
  { additionalProperties: false },
);

export default definePlugin({
  name: 'console',
  channels: {
    console: {
      configSchema: ConsoleConfig,
      create: (config: Static<typeof ConsoleConfig>, ctx) => {
        return {
          limits: { requiresTo: false },
          send: (msg) => {
            const text = `[console] delivery for run ${msg.runId}${msg.to ? ` to ${msg.to}` : ''}:\n${msg.text}\n[console] end of delivery\n`;
            if (config.stream === 'stderr')
              return new Promise<void>((resolve, reject) => process.stderr.write(text, (err) => (err ? reject(err) : resolve())));
            // standard output is shared with the logs: through their writer a delivery never lands inside a log line. It
            // counts as sent once handed over; waiting for each write would send one delivery per turn of the event loop.
            ctx.printStdout(text);
            return Promise.resolve();
          },
        };
      },
    },
  },
});
