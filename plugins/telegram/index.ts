/**
 * `telegram`: a channel that sends replies through the Telegram Bot API
 * (sendMessage, HTML parse mode). See docs/channels/telegram.md.
 */
import { definePlugin } from 'hook-intake/plugin';
import { TelegramConfig, type TelegramConfigValue } from './config.ts';
import { createTelegramChannel } from './channel.ts';

export default definePlugin({
  name: 'telegram',
  channels: {
    telegram: {
      configSchema: TelegramConfig,
      create: (config: TelegramConfigValue, ctx) => createTelegramChannel(config, ctx),
    },
  },
});
