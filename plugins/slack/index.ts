/**
 * `slack`: a channel that posts replies to a Slack conversation as an app's
 * bot user. See docs/channels/slack.md.
 */
import { definePlugin } from 'hook-intake/plugin';
import { SlackConfig, type SlackConfigValue } from './config.ts';
import { createSlackChannel } from './channel.ts';

export default definePlugin({
  name: 'slack',
  channels: {
    slack: {
      configSchema: SlackConfig,
      create: (config: SlackConfigValue, ctx) => createSlackChannel(config, ctx),
    },
  },
});
