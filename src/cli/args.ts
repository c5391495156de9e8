/** Argument parsing shared by the commands (node:util parseArgs, strict). */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export const commonOptions = {
  config: { type: 'string', short: 'c' },
  data: { type: 'string', short: 'd' },
  help: { type: 'boolean', short: 'h' },
} as const;

export function resolveDataDir(flag: string | undefined, env: Record<string, string | undefined> = process.env): string {
  return flag ?? env.HOOK_INTAKE_DATA ?? 'data';
}
