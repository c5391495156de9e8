/**
 * `imessage`: a channel that sends replies as iMessages through a BlueBubbles
 * server. See docs/channels/imessage.md.
 */
import { definePlugin } from 'hook-intake/plugin';
import { IMessageConfig, type IMessageConfigValue } from './config.ts';
import { createIMessageChannel } from './channel.ts';

export default definePlugin({
  name: 'imessage',
  channels: {
    imessage: {
      configSchema: IMessageConfig,
      create: (config: IMessageConfigValue, ctx) => createIMessageChannel(config, ctx),
    },
  },
});
