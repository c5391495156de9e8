/** The User-Agent chat channels send: `hook-intake/<version>`, the form Meta's Graph API describes. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../package-root.ts';

export const { version } = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };

export const USER_AGENT = `hook-intake/${version}`;
