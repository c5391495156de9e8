/**
 * `openai`: an agent provider for any OpenAI-compatible chat-completions
 * endpoint. See docs/runtime.md for its config keys.
 */
import { definePlugin } from 'hook-intake/plugin';
import { OpenAIConfig, type OpenAIConfigValue } from './config.ts';
import { createOpenAIProvider } from './provider.ts';

export default definePlugin({
  name: 'openai',
  agents: {
    openai: {
      configSchema: OpenAIConfig,
      create: (config: OpenAIConfigValue, ctx) => createOpenAIProvider(config, ctx),
    },
  },
});
