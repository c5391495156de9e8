/** The built-in plugins, registered before any user plugin. */
import type { Plugin } from '../src/plugins/define.ts';
import echo from './echo/index.ts';
import openai from './openai/index.ts';
import command from './command/index.ts';
import consoleChannel from './console/index.ts';
import webhook from './webhook/index.ts';
import telegram from './telegram/index.ts';
import whatsapp from './whatsapp/index.ts';

export const builtinPlugins: readonly Plugin[] = [echo, openai, command, consoleChannel, webhook, telegram, whatsapp];
