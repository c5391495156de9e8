/**
 * `console`: a channel that prints each delivered reply to the service's
 * standard output (or standard error), for local use and demos.
 */
import { Type, type Static } from '@sinclair/typebox';
import { definePlugin } from '../../src/plugins/define.ts';

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
      create: (config: Static<typeof ConsoleConfig>) => {
        const out = config.stream === 'stderr' ? process.stderr : process.stdout;
        return {
          limits: { requiresTo: false },
          send: (msg) =>
            new Promise<void>((resolve, reject) => {
              const header = `[console] delivery for run ${msg.runId}${msg.to ? ` to ${msg.to}` : ''}:`;
              out.write(`${header}\n${msg.text}\n[console] end of delivery\n`, (err) => (err ? reject(err) : resolve()));
            }),
        };
      },
    },
  },
});
