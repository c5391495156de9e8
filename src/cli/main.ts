/**
 * `hook-intake <command>`: one file per command; this one only dispatches.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../package-root.ts';
import { CHECK_HELP, CHECK_OPTIONS, check } from './check.ts';
import { serve, SERVE_HELP, SERVE_OPTIONS } from './serve.ts';
import { TRY_HELP, TRY_OPTIONS, tryHook } from './try.ts';
import { GMAIL_HELP, webhooks } from './gmail.ts';
import { prune, PRUNE_HELP, PRUNE_OPTIONS } from './prune.ts';
import { PRESETS_HELP, PRESETS_OPTIONS, presets } from './presets.ts';
import { SOURCES_HELP, SOURCES_OPTIONS, sources } from './sources.ts';
import { synopsis } from './args.ts';

const HELP: Record<string, string> = {
  serve: SERVE_HELP,
  check: CHECK_HELP,
  try: TRY_HELP,
  prune: PRUNE_HELP,
  webhooks: GMAIL_HELP,
  presets: PRESETS_HELP,
  sources: SOURCES_HELP,
};

const USAGE = `usage: hook-intake <command> [options]

commands:
  serve   run the service
          hook-intake serve ${synopsis(SERVE_OPTIONS)}
  check   validate the config and everything it loads, print a summary
          hook-intake check ${synopsis(CHECK_OPTIONS)}
  try     dry run: show what a request would match and dispatch, dispatching nothing
          hook-intake try <wake|agent|NAME> ${synopsis(TRY_OPTIONS)}
  prune   remove what retention says is old enough, at once, and print the counts
          hook-intake prune ${synopsis(PRUNE_OPTIONS)}
  presets list the presets; show one's options, event types and a sample message
          hook-intake presets [show NAME] ${synopsis(PRESETS_OPTIONS)}
  sources add NAME
          enable a preset in the config file and print the steps on the provider's side
          hook-intake sources add NAME ${synopsis(SOURCES_OPTIONS)}
  webhooks gmail auth|setup|run
          the Gmail bridge: sign in, write the config, serve the Pub/Sub push endpoint
          hook-intake webhooks gmail <auth|setup|run> --help

options:
  -h, --help     show this help and exit (hook-intake <command> --help: the command's options)
  -v, --version  print the version and exit

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
    case 'prune':
      return prune(rest);
    case 'webhooks':
      return webhooks(rest);
    case 'presets':
      return presets(rest);
    case 'sources':
      return sources(rest);
    case '-v':
    case '--version':
      process.stdout.write(`hook-intake ${version()} (Node.js ${process.version})\n`);
      return 0;
    case 'help':
      // `hook-intake help serve` is `hook-intake serve --help`
      process.stdout.write(HELP[rest[0] ?? ''] ?? USAGE);
      return 0;
    case undefined:
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      return cmd === undefined ? 1 : 0;
    default:
      process.stderr.write(`hook-intake: unknown command "${cmd}"\n\n${USAGE}`);
      return 1;
  }
}

/** The package's version, from its package.json. */
function version(): string {
  return (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}
