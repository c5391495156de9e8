/**
 * `gateway`: an agent provider that forwards each run to another gateway's
 * `/hooks/agent`, so this service can stand in front of a gateway already
 * running. See docs/runtime.md and docs/integrations.md.
 */
import { definePlugin } from 'hook-intake/plugin';
import { GatewayConfig, type GatewayConfigValue } from './config.ts';
import { createGatewayProvider } from './provider.ts';

export default definePlugin({
  name: 'gateway',
  agents: {
    gateway: {
      configSchema: GatewayConfig,
      create: (config: GatewayConfigValue, ctx) => createGatewayProvider(config, ctx),
    },
  },
});
