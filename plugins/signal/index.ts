/**
 * `signal`: a channel that sends replies as Signal messages through
 * signal-cli's HTTP daemon or signal-cli-rest-api. See docs/channels/signal.md.
 */
import { definePlugin } from 'hook-intake/plugin';
import { SignalConfig, type SignalConfigValue } from './config.ts';
import { createSignalChannel } from './channel.ts';

export default definePlugin({
  name: 'signal',
  channels: {
    signal: {
      configSchema: SignalConfig,
      create: (config: SignalConfigValue, ctx) => createSignalChannel(config, ctx),
    },
  },
});
