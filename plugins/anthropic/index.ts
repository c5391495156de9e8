/**
 * `anthropic`: an agent provider for the Messages API, through the official SDK. See
 * docs/providers/anthropic.md for its config keys.
 */
import { definePlugin } from 'hook-intake/plugin';
import { AnthropicConfig, type AnthropicConfigValue } from './config.ts';
import { createAnthropicProvider } from './provider.ts';

export default definePlugin({
  name: 'anthropic',
  agents: {
    anthropic: {
      configSchema: AnthropicConfig,
      create: (config: AnthropicConfigValue, ctx) => createAnthropicProvider(config, ctx),
    },
  },
});
