/**
 * `whatsapp`: a channel that sends replies through the WhatsApp Cloud API
 * (text messages, link previews off). See docs/channels/whatsapp.md.
 */
import { definePlugin } from 'hook-intake/plugin';
import { WhatsAppConfig, type WhatsAppConfigValue } from './config.ts';
import { createWhatsAppChannel } from './channel.ts';

export default definePlugin({
  name: 'whatsapp',
  channels: {
    whatsapp: {
      configSchema: WhatsAppConfig,
      create: (config: WhatsAppConfigValue, ctx) => createWhatsAppChannel(config, ctx),
    },
  },
});
