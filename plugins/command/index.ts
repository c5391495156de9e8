/**
 * `command`: an agent provider that runs a local program per run (prompt on
 * stdin, reply on stdout). See docs/runtime.md for its config keys.
 */
import { definePlugin } from 'hook-intake/plugin';
import { CommandConfig, type CommandConfigValue } from './config.ts';
import { createCommandProvider } from './provider.ts';

export default definePlugin({
  name: 'command',
  agents: {
    command: {
      configSchema: CommandConfig,
      create: (config: CommandConfigValue, ctx) => createCommandProvider(config, ctx),
    },
  },
});
