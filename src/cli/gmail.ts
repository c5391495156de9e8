/**
 * `hook-intake webhooks gmail auth | setup | run`: the Gmail bridge (src/gmail/). `auth` gets the
 * mailbox's refresh token, `setup` writes the config and prints the gcloud commands, `run` serves
 * the Pub/Sub push endpoint and posts new mail to the gmail hook. The bridge's modules (and jose,
 * yaml) are loaded only when one of these runs: every other command, `serve` included, starts
 * without them.
 */
import { resolve } from 'node:path';
import { findConfigFile, loadConfig, DEFAULT_CONFIG_FILE } from '../config/load.ts';
import { ConfigError, formatIssue } from '../errors.ts';
import { createLogger, logFormat, printStdout } from '../log.ts';
import { commonOptions, helpText, parse, resolveDataDir, synopsis, UsageError, type Flag } from './args.ts';
import { dataDirTokens } from './tokens.ts';

export const AUTH_OPTIONS = {
  ...commonOptions,
  'client-secret': {
    type: 'string',
    value: 'FILE',
    help: 'the OAuth client file downloaded from Google Cloud (Desktop app); else hooks.gmail.oauth.clientId and clientSecret',
  },
} as const satisfies Record<string, Flag>;

export const SETUP_OPTIONS = {
  ...commonOptions,
  account: { type: 'string', value: 'EMAIL', help: 'the mailbox to watch (required)' },
  project: {
    type: 'string',
    value: 'ID',
    help: "the Google Cloud project of the Pub/Sub topic; default gcloud's project, $GOOGLE_CLOUD_PROJECT or $CLOUDSDK_CORE_PROJECT",
  },
  topic: {
    type: 'string',
    value: 'NAME',
    help: 'the Pub/Sub topic, a name or projects/<project>/topics/<name>; default hook-intake-gmail',
  },
  subscription: {
    type: 'string',
    value: 'NAME',
    help: 'the Pub/Sub subscription; default hook-intake-gmail-push, or hook-intake-gmail-pull in pull mode',
  },
  mode: {
    type: 'string',
    value: 'push|pull',
    help: "push: Pub/Sub calls the push endpoint (a public URL); pull: run pulls from the subscription; default the config's, else push",
  },
  'push-endpoint': { type: 'string', value: 'URL', help: 'the public https URL that reaches the push path (for the subscription command)' },
  label: { type: 'string', value: 'LABEL', help: 'the Gmail label to watch; default INBOX' },
  'hook-url': { type: 'string', value: 'URL', help: "where new mail is posted; default the local service's /hooks/gmail" },
} as const satisfies Record<string, Flag>;

export const RUN_OPTIONS = {
  ...commonOptions,
  port: {
    type: 'string',
    short: 'p',
    value: 'N',
    help: 'push mode: listen on this port instead of hooks.gmail.serve.port (0: any free port)',
  },
  'log-format': {
    type: 'string',
    value: 'json|pretty',
    help: 'log lines as JSON or one readable line each; default pretty on a terminal, else json',
  },
} as const satisfies Record<string, Flag>;

export const GMAIL_HELP = `usage: hook-intake webhooks gmail <auth|setup|run> [options]

commands:
  auth    sign in to the mailbox (Google's consent page) and store the refresh token
          hook-intake webhooks gmail auth ${synopsis(AUTH_OPTIONS)}
  setup   write the gmail config, call users.watch, print the gcloud commands left to run
          hook-intake webhooks gmail setup --account EMAIL [options]
  run     serve the Pub/Sub push endpoint (or pull, in pull mode) and post new mail to the gmail hook
          hook-intake webhooks gmail run ${synopsis(RUN_OPTIONS)}

hook-intake webhooks gmail <command> --help shows the command's options.
`;

export const GMAIL_COMMAND_HELP = {
  auth: helpText(
    'hook-intake webhooks gmail auth [options]',
    `Signs in to the mailbox with Google's flow for installed apps: prints a consent URL, catches the
answer on 127.0.0.1 (a free port), and stores the refresh token (mode 0600) in the file
hooks.gmail.oauth.refreshToken points at, else in secrets/gmail-refresh-token next to the config,
which the config is then pointed at.`,
    AUTH_OPTIONS,
  ),
  setup: helpText(
    'hook-intake webhooks gmail setup --account EMAIL [options]',
    `Writes hooks.enabled, hooks.token (generated if absent), "gmail" in hooks.presets and hooks.gmail into
the config file, keeping its other keys and comments. New tokens go into files (mode 0600) under
secrets/ next to the config. With OAuth credentials it calls users.watch. Prints the gcloud commands for
the Pub/Sub topic, the publisher grant and the push subscription; with --mode pull, a pull subscription
and the grant that lets the mailbox's account pull from it (no public URL needed).`,
    SETUP_OPTIONS,
  ),
  run: helpText(
    'hook-intake webhooks gmail run [options]',
    `Serves the Pub/Sub push endpoint (hooks.gmail.serve) and renews the Gmail watch. Each push lists the
mailbox's history since the last processed historyId (kept in the data directory), fetches the new
messages and posts each to the gmail hook. Pub/Sub gets 2xx only when the hook accepted every message,
else 5xx and delivers the push again. Prints "listening on URL" when ready; stops on SIGTERM or SIGINT.
With hooks.gmail.mode "pull" it pulls from hooks.gmail.subscription instead (no endpoint, no public
URL), acknowledges a notice only when the hook accepted every message, and prints "pulling from NAME".`,
    RUN_OPTIONS,
  ),
};

export async function webhooks(argv: string[]): Promise<number | undefined> {
  const [service, cmd, ...rest] = argv;
  if (service === '--help' || service === '-h' || (service === 'gmail' && (cmd === undefined || cmd === '--help' || cmd === '-h'))) {
    process.stdout.write(GMAIL_HELP);
    return service === 'gmail' && cmd === undefined ? 1 : 0;
  }
  if (service !== 'gmail' || !(cmd === 'auth' || cmd === 'setup' || cmd === 'run')) {
    process.stderr.write(`hook-intake webhooks: unknown command "${[service, cmd].filter(Boolean).join(' ')}"\n\n${GMAIL_HELP}`);
    return 1;
  }
  const fail = (message: string) => {
    process.stderr.write(`hook-intake webhooks gmail ${cmd}: ${message}\n`);
    return 1;
  };
  try {
    if (cmd === 'auth') return await auth(rest);
    if (cmd === 'setup') return await setup(rest);
    return await run(rest);
  } catch (err) {
    if (err instanceof UsageError) return fail(`${err.message}\n(hook-intake webhooks gmail ${cmd} --help lists the options)`);
    if (err instanceof ConfigError) return fail(`invalid configuration\n${err.issues.map((i) => `  ${formatIssue(i)}`).join('\n')}`);
    return fail((err as Error).message);
  }
}

/** The config file: --config, $HOOK_INTAKE_CONFIG, ./hook-intake.json5 (created by setup when absent). */
const configFile = (flag: string | undefined) => findConfigFile({ file: flag }) ?? resolve(DEFAULT_CONFIG_FILE);

async function auth(argv: string[]): Promise<number> {
  const { values } = parse(argv, AUTH_OPTIONS);
  if (values.help) {
    process.stdout.write(GMAIL_COMMAND_HELP.auth);
    return 0;
  }
  const file = configFile(values.config);
  const { runAuth } = await import('../gmail/auth.ts');
  const { realDeps } = await import('../gmail/settings.ts');
  const r = await runAuth({
    file,
    dataDir: resolveDataDir(values.data, file).dir,
    clientSecretFile: values['client-secret'],
    deps: realDeps(),
    show: (url) => printStdout(`open this URL in a browser and allow access:\n${url}\n`),
  });
  printStdout(r.notes.map((n) => `${n}\n`).join(''));
  return 0;
}

async function setup(argv: string[]): Promise<number> {
  const { values } = parse(argv, SETUP_OPTIONS);
  if (values.help) {
    process.stdout.write(GMAIL_COMMAND_HELP.setup);
    return 0;
  }
  if (!values.account) throw new UsageError('--account is required');
  if (values.mode !== undefined && values.mode !== 'push' && values.mode !== 'pull') throw new UsageError('--mode must be push or pull');
  const file = configFile(values.config);
  const { runSetup } = await import('../gmail/setup.ts');
  const { realDeps } = await import('../gmail/settings.ts');
  const r = await runSetup({
    file,
    dataDir: resolveDataDir(values.data, file).dir,
    account: values.account,
    project: values.project,
    topic: values.topic,
    subscription: values.subscription,
    mode: values.mode,
    pushEndpoint: values['push-endpoint'],
    label: values.label,
    hookUrl: values['hook-url'],
    deps: realDeps(),
    log: createLogger('silent'),
  });
  printStdout(`${r.notes.map((n) => `${n}\n`).join('')}\nrun these gcloud commands (once):\n${r.commands.map((c) => `  ${c}\n`).join('')}`);
  return 0;
}

async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, RUN_OPTIONS);
  if (values.help) {
    process.stdout.write(GMAIL_COMMAND_HELP.run);
    return 0;
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be an integer from 0 to 65535');
  }
  const format = logFormat(values['log-format'], process.stdout.isTTY === true);
  const file = findConfigFile({ file: values.config });
  const dataDir = resolveDataDir(values.data, file).dir;
  const tokens = dataDirTokens(dataDir, false);
  const loaded = loadConfig({ file, dataDir, tokenFallback: tokens.fallback });
  if (tokens.notYet.has('hooks'))
    throw new Error(`hooks.token is not set and serve has not generated one in ${dataDir} yet: start serve once, or run gmail setup`);
  const log = createLogger(loaded.config.logging.level, undefined, format);
  const { startGmailRun } = await import('../gmail/run.ts');
  const { realDeps } = await import('../gmail/settings.ts');
  const running = await startGmailRun({ config: loaded.config, dataDir, deps: realDeps(), log, port });
  const stopped = new Promise<number>((done) => {
    const onSignal = (sig: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      log.info({ signal: sig }, 'stopping');
      running.close().then(
        () => done(0),
        () => done(1),
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  if (running.url) printStdout(`listening on ${new URL(running.url).origin} (push path ${new URL(running.url).pathname})\n`);
  else printStdout(`pulling from ${running.subscription}\n`);
  return stopped;
}
