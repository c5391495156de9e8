/**
 * `hook-intake prune [--dry-run]`: applies `retention` at once (what the service does in the background,
 * in small batches, while it serves) and prints what it removed, or with `--dry-run` what it would.
 * It opens the database itself, so it runs while the service is stopped: the service assumes it is the
 * database's only writer.
 */
import { ConfigError, formatIssue } from '../errors.ts';
import { findConfigFile, loadConfig } from '../config/load.ts';
import { openStore, StoreOpenError } from '../store/index.ts';
import type { PruneCounts } from '../store/types.ts';
import { pruneAll, pruneBefore } from '../runtime/retention.ts';
import { commonOptions, helpText, parse, resolveDataDir, UsageError, type Flag } from './args.ts';

export const PRUNE_OPTIONS = {
  'dry-run': { type: 'boolean', help: 'count what would be removed, remove nothing' },
  ...commonOptions,
} as const satisfies Record<string, Flag>;

export const PRUNE_HELP = helpText(
  'hook-intake prune [options]',
  `Removes what retention (retention.runsDays, eventsDays, requestsDays) says is old enough: finished
runs, delivered outbox entries, transcripts of idle sessions, consumed events and kept requests, and
prints the counts. The service does this itself in the background; this does it at once. Run it
while the service is stopped (the database is the service's alone while it runs).`,
  PRUNE_OPTIONS,
);

/** The counts as printed: one line per kind. */
export function formatCounts(c: PruneCounts, dryRun: boolean): string {
  const verb = dryRun ? 'would remove' : 'removed';
  const rows: [string, number][] = [
    ['runs', c.runs],
    ['events', c.events],
    ['transcript messages', c.messages],
    ['outbox deliveries', c.deliveries],
    ['kept requests', c.requests],
  ];
  return `${rows.map(([what, n]) => `${verb} ${n} ${what}`).join('\n')}\n`;
}

export async function prune(argv: string[], clock: () => number = Date.now): Promise<number> {
  let values;
  try {
    ({ values } = parse(argv, PRUNE_OPTIONS));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`hook-intake prune: ${err.message}\n(hook-intake prune --help lists the options)\n`);
      return 1;
    }
    throw err;
  }
  if (values.help) {
    process.stdout.write(PRUNE_HELP);
    return 0;
  }
  const file = findConfigFile({ file: values.config });
  const dataDir = resolveDataDir(values.data, file).dir;
  let config;
  try {
    // storage and retention alone: the rest (secrets of webhooks and channels among it) is not needed here
    config = loadConfig({ file, dataDir, only: ['storage', 'retention'] }).config;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`hook-intake: invalid configuration\n${err.issues.map((i) => `  ${formatIssue(i)}`).join('\n')}\n`);
      return 1;
    }
    throw err;
  }
  let store;
  try {
    store = await openStore(config.storage);
  } catch (err) {
    if (err instanceof StoreOpenError) {
      process.stderr.write(`hook-intake prune: cannot open storage: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  try {
    const before = pruneBefore(config.retention, clock());
    const dryRun = values['dry-run'] === true;
    const counts = dryRun ? await store.records.countPrunable(before) : await pruneAll(store.records, before, { batch: 1000 });
    process.stdout.write(formatCounts(counts, dryRun));
    return 0;
  } finally {
    await store.close();
  }
}
