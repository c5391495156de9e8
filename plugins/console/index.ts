/**
 * `console`: a channel that prints each delivered reply to the service's
 * standard output (or standard error), for local use and demos.
 */
import { Type, type Static } from '@sinclair/typebox';
import { definePlugin } from '../../src/plugins/define.ts';
import { printStdout } from '../../src/log.ts';

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
        // standard output is shared with the logs: printed through their writer, a delivery never lands inside a log line
        const print =
          config.stream === 'stderr'
            ? (text: string) => new Promise<void>((resolve, reject) => process.stderr.write(text, (err) => (err ? reject(err) : resolve())))
            : printStdout;
        return {
          limits: { requiresTo: false },
          send: (msg) => {
            const header = `[console] delivery for run ${msg.runId}${msg.to ? ` to ${msg.to}` : ''}:`;
            return print(`${header}\n${msg.text}\n[console] end of delivery\n`);
          },
        };
      },
    },
  },
});
