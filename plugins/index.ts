/** The built-in plugins, registered before any user plugin. */
import type { Plugin } from 'hook-intake/plugin';
import echo from './echo/index.ts';
import openai from './openai/index.ts';
import anthropic from './anthropic/index.ts';
import command from './command/index.ts';
import gateway from './gateway/index.ts';
import consoleChannel from './console/index.ts';
import webhook from './webhook/index.ts';
import discord from './discord/index.ts';
import slack from './slack/index.ts';
import mattermost from './mattermost/index.ts';
import msteams from './msteams/index.ts';
import signal from './signal/index.ts';
import imessage from './imessage/index.ts';
import telegram from './telegram/index.ts';
import whatsapp from './whatsapp/index.ts';

export const builtinPlugins: readonly Plugin[] = [
  echo,
  openai,
  anthropic,
  command,
  gateway,
  consoleChannel,
  webhook,
  telegram,
  whatsapp,
  discord,
  slack,
  mattermost,
  msteams,
  signal,
  imessage,
];
