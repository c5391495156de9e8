/**
 * `hook-intake serve`: load the config, start the service, print
 * `listening on http://ADDR:PORT` when ready, stop cleanly on SIGTERM/SIGINT.
 */
import { flushCompileCache } from 'node:module';
import { findConfigFile, loadConfig, type LoadedConfig } from '../config/load.ts';
import { ConfigError, formatIssue } from '../errors.ts';
import { createLogger, logFormat, printStdout, type LogFormat, type Logger } from '../log.ts';
import { startService, type Service } from '../service.ts';
import { StoreOpenError } from '../store/index.ts';
import { commonOptions, helpText, parse, resolveDataDir, UsageError, type Flag } from './args.ts';
import { dataDirTokens, type TokenStore } from './tokens.ts';

export const SERVE_OPTIONS = {
  ...commonOptions,
  port: { type: 'string', short: 'p', value: 'N', help: 'listen on this port instead of gateway.port (0: any free port)' },
  bind: { type: 'string', short: 'b', value: 'ADDR', help: 'listen on this address instead of gateway.bind' },
  'log-format': {
    type: 'string',
    value: 'json|pretty',
    help: 'log lines as JSON, one object a line, or pretty: one readable line each; default pretty when standard output is a terminal, else json',
  },
} as const satisfies Record<string, Flag>;

export const SERVE_HELP = helpText(
  'hook-intake serve [options]',
  `Runs the service: the hook endpoints, the read API, the runs, heartbeats and deliveries. Prints
"listening on http://ADDR:PORT" when it takes requests, logs to standard output, reloads the config
and transforms when they change, and stops cleanly on SIGTERM or SIGINT.`,
  SERVE_OPTIONS,
);

type ServeValues = ReturnType<typeof parse<typeof SERVE_OPTIONS>>['values'];

/** The options of `serve`, or the exit code once help or a usage error is printed. */
function serveOptions(argv: string[]): { values: ServeValues; format: LogFormat; port: number | undefined } | number {
  let values: ServeValues;
  try {
    ({ values } = parse(argv, SERVE_OPTIONS));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`hook-intake serve: ${err.message}\n(hook-intake serve --help lists the options)\n`);
      return 1;
    }
    throw err;
  }
  if (values.help) {
    process.stdout.write(SERVE_HELP);
    return 0;
  }
  let format: LogFormat;
  try {
    format = logFormat(values['log-format'], process.stdout.isTTY === true);
  } catch (err) {
    process.stderr.write(`hook-intake serve: ${(err as Error).message}\n`);
    return 1;
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      process.stderr.write(`hook-intake serve: --port must be an integer from 0 to 65535\n`);
      return 1;
    }
  }
  return { values, format, port };
}

/** What to print for a start that failed for a reason the operator can fix; undefined for any other error. */
function startFailure(err: unknown): string | undefined {
  if (err instanceof ConfigError) return `hook-intake: invalid configuration\n${err.issues.map((i) => `  ${formatIssue(i)}`).join('\n')}\n`;
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'EADDRINUSE' || e.code === 'EACCES' || e.code === 'EADDRNOTAVAIL') return `hook-intake: cannot listen: ${e.message}\n`;
  if (err instanceof StoreOpenError) return `hook-intake: cannot open storage: ${err.message}\n`;
  return undefined;
}

/** Stops the service on SIGTERM or SIGINT; resolves with the exit code. */
function stopOnSignal(service: Service, logger: Logger): Promise<number> {
  return new Promise<number>((done) => {
    const onSignal = (sig: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      logger.info({ signal: sig }, 'stopping');
      service.stop().then(
        () => done(0),
        (err) => {
          logger.error({ err }, 'error while stopping');
          done(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

export async function serve(argv: string[]): Promise<number | undefined> {
  const opts = serveOptions(argv);
  if (typeof opts === 'number') return opts;
  const { values, format, port } = opts;
  // the file is located once; reloads read the same file again
  const file = findConfigFile({ file: values.config });
  const data = resolveDataDir(values.data, file);
  const dataDir = data.dir;
  const tokens = dataDirTokens(dataDir, true);
  const load = () => loadConfig({ file, dataDir, tokenFallback: tokens.fallback });
  let loaded: LoadedConfig;
  try {
    loaded = load();
  } catch (err) {
    const why = err instanceof ConfigError ? startFailure(err) : undefined;
    if (!why) throw err;
    process.stderr.write(why);
    return 1;
  }

  const logger = createLogger(loaded.config.logging.level, undefined, format);
  let service: Service;
  try {
    service = await startService({ load, initial: loaded, logger, port, bind: values.bind });
  } catch (err) {
    const why = startFailure(err);
    if (!why) throw err;
    process.stderr.write(why);
    return 1;
  }

  // the handlers go in before the ready line: a supervisor may send SIGTERM the moment it reads it
  const stopped = stopOnSignal(service, logger);
  // Node writes the code it compiled into the compile cache at exit, which on a start that found the
  // cache empty kept the process alive well after `stopped` (measured: docs/performance.md). Written now,
  // before the ready line: the write holds the event loop, and a request taken meanwhile would wait
  // behind it (a slow body's bytes would pile up unseen past its read deadline)
  flushCompileCache();
  printStdout(`listening on ${service.url}\n`);
  printStdout(`data directory: ${data.dir} (${data.from})\n`);
  printStdout(welcomeText(service, loaded, tokens, process.stdout.isTTY === true));
  return stopped;
}

/**
 * Tells a new user how to reach the service. A generated token is shown only on the start that
 * created it, and only at a terminal: where standard output is not one (a service manager's
 * journal, a container engine's log, which keep it) the lines say where the token is kept and
 * read it from there (docs/deployment.md, "Secrets").
 */
export function welcomeText(service: Pick<Service, 'host' | 'port'>, loaded: LoadedConfig, tokens: TokenStore, terminal: boolean): string {
  const cfg = loaded.config;
  if (!cfg.hooks.enabled) return 'hooks are disabled (hooks.enabled is false); only the read API and health endpoints answer\n';
  const host =
    service.host === '0.0.0.0' || service.host === '::' ? '127.0.0.1' : service.host.includes(':') ? `[${service.host}]` : service.host;
  const base = `http://${host}:${service.port}`;
  const lines: string[] = [];
  const hookToken = terminal ? tokens.generated.get('hooks') : undefined;
  const gatewayToken = terminal ? tokens.generated.get('gateway') : undefined;
  const usesFile = (kind: 'hooks' | 'gateway') => loaded.fallbackTokens.includes(kind);
  const show = (kind: 'hooks' | 'gateway', generated: string | undefined) =>
    generated ?? (usesFile(kind) ? `$(cat ${tokens.file(kind)})` : kind === 'hooks' ? '<HOOK_TOKEN>' : '<GATEWAY_TOKEN>');
  const told = (kind: 'hooks' | 'gateway', what: string, token: string | undefined) => {
    if (token) lines.push(`${what} generated and kept in ${tokens.file(kind)} (shown only this once): ${token}`);
    else if (tokens.generated.has(kind))
      lines.push(`${what} generated and kept in ${tokens.file(kind)} (not shown: standard output is not a terminal)`);
  };
  told('hooks', 'hook token', hookToken);
  told('gateway', 'read API token', gatewayToken);
  lines.push('try it:');
  lines.push(
    `  curl -sS -X POST ${base}${cfg.hooks.path}/wake -H "Authorization: Bearer ${show('hooks', hookToken)}" -H 'Content-Type: application/json' -d '{"text":"hello from curl"}'`,
  );
  if (cfg.gateway.auth.token) {
    lines.push(`  curl -sS ${base}/api/main/events -H "Authorization: Bearer ${show('gateway', gatewayToken)}"`);
    lines.push(`console: ${base}/ui (sign in with the read API token)`);
  }
  return `${lines.join('\n')}\n`;
}
