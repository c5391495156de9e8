/**
 * `msteams`: a channel that posts replies to Microsoft Teams conversations
 * through the Bot Framework Connector. See docs/channels/msteams.md.
 */
import { definePlugin } from 'hook-intake/plugin';
import { MsTeamsConfig, type MsTeamsConfigValue } from './config.ts';
import { createMsTeamsChannel } from './channel.ts';

export default definePlugin({
  name: 'msteams',
  channels: {
    msteams: {
      configSchema: MsTeamsConfig,
      create: (config: MsTeamsConfigValue, ctx) => createMsTeamsChannel(config, ctx),
    },
  },
});
