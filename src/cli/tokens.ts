/**
 * Tokens kept in the data dir when the config sets none: `serve` generates
 * them on first start (mode 0600) and reuses them afterwards; `check` and
 * `try` only read them.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const TOKEN_FILES = { hooks: 'hook-token', gateway: 'gateway-token' } as const;

export interface TokenStore {
  fallback: (kind: 'hooks' | 'gateway') => string | undefined;
  /** Tokens generated during this process (printed once by `serve`). */
  generated: Map<'hooks' | 'gateway', string>;
  file(kind: 'hooks' | 'gateway'): string;
}

export function dataDirTokens(dataDir: string, generate: boolean): TokenStore {
  const generated = new Map<'hooks' | 'gateway', string>();
  const file = (kind: 'hooks' | 'gateway') => join(dataDir, TOKEN_FILES[kind]);
  return {
    generated,
    file,
    fallback(kind) {
      try {
        const t = readFileSync(file(kind), 'utf8').trim();
        if (t) return t;
      } catch {
        // absent: generate below when allowed
      }
      if (!generate) return undefined;
      const t = randomBytes(24).toString('base64url');
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(file(kind), `${t}\n`, { mode: 0o600, flag: 'wx' });
      generated.set(kind, t);
      return t;
    },
  };
}
