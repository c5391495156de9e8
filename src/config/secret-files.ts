/**
 * Secrets the Gmail commands create (refresh token, push token, hook token) go into files of mode
 * 0600, and the config refers to them as `{ file: "path" }`, so the config file itself holds none.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';

/** The folder next to the config where new secret files go. */
export const SECRETS_DIR = 'secrets';

export const newToken = (): string => randomBytes(24).toString('base64url');

/** Writes `value` to `file` (mode 0600, created atomically; a new folder gets 0700). */
export function writeSecretFile(file: string, value: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, `${value}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  // the umask cannot widen 0600, but an existing file's mode is replaced on rename only
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

/**
 * Where a secret the config refers to lives: the file of a `{ file }` reference (relative to the
 * config's folder), or undefined when the value is a string (written inline or `${ENV}`).
 */
export function secretFileOf(raw: unknown, configDir: string): string | undefined {
  if (raw && typeof raw === 'object' && typeof (raw as { file?: unknown }).file === 'string')
    return resolve(configDir, (raw as { file: string }).file);
  return undefined;
}

/** The `{ file }` value that points at `file` from the config's folder. */
export function fileRef(file: string, configDir: string): { file: string } {
  const rel = relative(configDir, file);
  return { file: rel.startsWith('..') || isAbsolute(rel) ? file : rel };
}
