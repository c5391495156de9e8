/**
 * Tokens kept in the data dir when the config sets none: `serve` generates
 * them on first start (mode 0600) and reuses them afterwards; `check` and
 * `try` only read them, and before the first start stand in an unsaved one,
 * so a fresh checkout can be checked before it has ever served.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const TOKEN_FILES = { hooks: 'hook-token', gateway: 'gateway-token' } as const;

export interface TokenStore {
  fallback: (kind: 'hooks' | 'gateway') => string | undefined;
  /** Tokens generated during this process (printed once by `serve`). */
  generated: Map<'hooks' | 'gateway', string>;
  /** Tokens not generated yet, stood in for by an unsaved one (`check`, `try` before the first `serve`). */
  notYet: Set<'hooks' | 'gateway'>;
  file(kind: 'hooks' | 'gateway'): string;
}

export function dataDirTokens(dataDir: string, generate: boolean): TokenStore {
  const generated = new Map<'hooks' | 'gateway', string>();
  const notYet = new Set<'hooks' | 'gateway'>();
  const file = (kind: 'hooks' | 'gateway') => join(dataDir, TOKEN_FILES[kind]);
  return {
    generated,
    notYet,
    file,
    fallback(kind) {
      try {
        const t = readFileSync(file(kind), 'utf8').trim();
        if (t) return t;
      } catch {
        // absent: generate below when allowed
      }
      const t = randomBytes(24).toString('base64url');
      if (!generate) {
        notYet.add(kind);
        return t;
      }
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(file(kind), `${t}\n`, { mode: 0o600, flag: 'wx' });
      generated.set(kind, t);
      return t;
    },
  };
}
