/** The User-Agent chat channels send: `hook-intake/<version>`, the form Meta's Graph API describes. */
import { createRequire } from 'node:module';

export const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

export const USER_AGENT = `hook-intake/${version}`;
