/** Argument parsing shared by the commands (node:util parseArgs, strict), and their `--help`. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { dirname, join, resolve } from 'node:path';

export class UsageError extends Error {}

/** A flag as node:util parseArgs takes it, plus what `--help` says about it. */
export interface Flag {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** The value's name in the help (`FILE`, `N`); string flags only. */
  value?: string;
  help: string;
}

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, allowPositionals = false) {
  try {
    // parseArgs reads only its own keys of each flag (type, short, multiple): `value` and `help` are for `--help`
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export const commonOptions = {
  config: {
    type: 'string',
    short: 'c',
    value: 'FILE',
    help: 'the config file (JSON5, JSON or YAML); default $HOOK_INTAKE_CONFIG, else ./hook-intake.json5, else the embedded defaults',
  },
  data: {
    type: 'string',
    short: 'd',
    value: 'DIR',
    help: 'the data directory (database, generated tokens); default $HOOK_INTAKE_DATA, else data next to the config file',
  },
  help: { type: 'boolean', short: 'h', help: 'show this help and exit' },
} as const satisfies Record<string, Flag>;

/** The flags of a command in one line: `[-c FILE] [-d DIR] …` (help left out). */
export function synopsis(options: Record<string, Flag>): string {
  return Object.entries(options)
    .filter(([name]) => name !== 'help')
    .map(([name, o]) => `[${o.short ? `-${o.short}` : `--${name}`}${o.value ? ` ${o.value}` : ''}]${o.multiple ? '…' : ''}`)
    .join(' ');
}

/** `--help` of a command: usage line, what it does, then every flag with its short form (`--help` last). */
export function helpText(usage: string, about: string, options: Record<string, Flag>): string {
  const flags = Object.entries(options).sort(([a], [b]) => Number(a === 'help') - Number(b === 'help'));
  const rows = flags.map(([name, o]) => [`${o.short ? `-${o.short}, ` : '    '}--${name}${o.value ? ` ${o.value}` : ''}`, o.help] as const);
  const width = Math.max(...rows.map(([flag]) => flag.length));
  const lines = rows.map(
    ([flag, help]) => `  ${flag.padEnd(width)}  ${wrap(help, HELP_WIDTH - width - 4).join(`\n${' '.repeat(width + 4)}`)}`,
  );
  return `usage: ${usage}\n\n${about}\n\noptions:\n${lines.join('\n')}\n`;
}

const HELP_WIDTH = 100;

/** `text` in lines of at most `width` characters, broken at spaces (a longer word stays whole). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}

/** The data directory, absolute, and what chose it (for `check` and `serve` to say). */
export interface DataDir {
  dir: string;
  from: string;
}

/**
 * The data directory (docs/configuration.md, data directory): `--data`, else `$HOOK_INTAKE_DATA` (both
 * against the working directory), else `data` next to the config file, as the config's other relative
 * paths are; on the embedded defaults (no file), `./data`.
 */
export function resolveDataDir(
  flag: string | undefined,
  configFile: string | undefined,
  env: Record<string, string | undefined> = process.env,
  cwd = process.cwd(),
): DataDir {
  if (flag) return { dir: resolve(cwd, flag), from: '--data' };
  if (env.HOOK_INTAKE_DATA) return { dir: resolve(cwd, env.HOOK_INTAKE_DATA), from: '$HOOK_INTAKE_DATA' };
  if (configFile) return { dir: join(dirname(configFile), 'data'), from: 'next to the config file' };
  return { dir: resolve(cwd, 'data'), from: 'in the working directory: no config file' };
}
