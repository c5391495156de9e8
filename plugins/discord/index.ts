/**
 * `discord`: a channel that posts replies to a Discord channel as a bot.
 * See docs/channels/discord.md.
 */
import { definePlugin } from 'hook-intake/plugin';
import { DiscordConfig, type DiscordConfigValue } from './config.ts';
import { createDiscordChannel } from './channel.ts';

export default definePlugin({
  name: 'discord',
  channels: {
    discord: {
      configSchema: DiscordConfig,
      create: (config: DiscordConfigValue, ctx) => createDiscordChannel(config, ctx),
    },
  },
});
