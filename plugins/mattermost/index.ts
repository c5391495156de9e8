/**
 * `mattermost`: a channel that posts replies to a Mattermost channel.
 * See docs/channels/mattermost.md.
 */
import { definePlugin } from 'hook-intake/plugin';
import { MattermostConfig, type MattermostConfigValue } from './config.ts';
import { createMattermostChannel } from './channel.ts';

export default definePlugin({
  name: 'mattermost',
  channels: {
    mattermost: {
      configSchema: MattermostConfig,
      create: (config: MattermostConfigValue, ctx) => createMattermostChannel(config, ctx),
    },
  },
});
