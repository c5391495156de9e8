/**
 * `hook-intake <command>`: one file per command; this one only dispatches.
 */
import { serve } from './serve.ts';
import { check } from './check.ts';
import { tryHook } from './try.ts';

const USAGE = `usage: hook-intake <command> [options]

commands:
  serve   [--config FILE] [--port N] [--bind ADDR] [--data DIR]   run the service
  check   [--config FILE] [--data DIR]                              validate the config and print a summary
  try     <wake|agent|NAME> [--config FILE] [--payload FILE|-] [-H 'name: value']
                                                                    dry run: show what a request would dispatch

The config file is --config, else $HOOK_INTAKE_CONFIG, else ./hook-intake.json5, else the embedded defaults.
`;

export async function main(argv: string[]): Promise<number | undefined> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case 'serve':
      return serve(rest);
    case 'check':
      return check(rest);
    case 'try':
      return tryHook(rest);
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(USAGE);
      return cmd === undefined ? 1 : 0;
    default:
      process.stderr.write(`hook-intake: unknown command "${cmd}"\n\n${USAGE}`);
      return 1;
  }
}
