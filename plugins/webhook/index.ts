/**
 * `webhook`: a channel that POSTs each reply as JSON to a URL, optionally
 * signed as Standard Webhooks sign. See docs/runtime.md for its config keys.
 */
import { definePlugin } from 'hook-intake/plugin';
import { WebhookConfig, type WebhookConfigValue } from './config.ts';
import { createWebhookChannel } from './channel.ts';

export default definePlugin({
  name: 'webhook',
  channels: {
    webhook: {
      configSchema: WebhookConfig,
      create: (config: WebhookConfigValue, ctx) => createWebhookChannel(config, ctx),
    },
  },
});
