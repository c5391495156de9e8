/**
 * The bridge's durable state, one small JSON file per mailbox: the last historyId whose messages
 * the hook accepted, and the ids of the messages posted lately (so a resync that lists recent
 * mail does not post them again). Written atomically: a temporary file, fsync, rename, then fsync
 * of the directory, so a crash leaves either the old state or the new one.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface BridgeState {
  historyId?: string;
  /** Ids of the last messages posted, newest last. */
  posted: string[];
}

/** How many posted ids are remembered: more than a resync lists. */
export const POSTED_KEPT = 500;

export const stateFile = (dataDir: string, account: string): string =>
  join(dataDir, `gmail-${account.toLowerCase().replace(/[^a-z0-9._@-]/g, '_')}.json`);

export function readState(file: string): BridgeState {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { posted: [] };
    throw err;
  }
  const data = JSON.parse(text) as Partial<BridgeState>;
  return {
    historyId: typeof data.historyId === 'string' ? data.historyId : undefined,
    posted: Array.isArray(data.posted) ? data.posted.filter((x) => typeof x === 'string') : [],
  };
}

export function writeState(file: string, state: BridgeState): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, `${JSON.stringify({ historyId: state.historyId, posted: state.posted.slice(-POSTED_KEPT) })}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  const dir = openSync(dirname(file), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

/** Compares two Gmail historyIds (decimal strings up to 2^64). */
export const newer = (a: string, b: string | undefined): boolean => b === undefined || BigInt(a) > BigInt(b);
