/**
 * What `check` and `try` share: load the config (reading, never generating,
 * tokens from the data dir) and build a generation without starting anything.
 */
import { resolve } from 'node:path';
import { loadConfig, type LoadedConfig } from '../config/load.ts';
import { createLogger } from '../log.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { buildGeneration } from '../generation/build.ts';
import type { Generation } from '../generation/types.ts';
import { resolveDataDir } from './args.ts';
import { dataDirTokens } from './tokens.ts';

export interface OfflineGeneration {
  gen: Generation;
  loaded: LoadedConfig;
  /** Tokens `serve` has not generated yet (an unsaved one stands in). */
  notYet: ReadonlySet<'hooks' | 'gateway'>;
}

export async function offlineGeneration(configFlag: string | undefined, dataFlag: string | undefined): Promise<OfflineGeneration> {
  const dataDir = resolve(resolveDataDir(dataFlag));
  const tokens = dataDirTokens(dataDir, false);
  const loaded = loadConfig({ file: configFlag, dataDir, tokenFallback: tokens.fallback });
  const gen = await buildGeneration(loaded, { builtins: builtinPlugins, logger: createLogger('silent') });
  return { gen, loaded, notYet: tokens.notYet };
}
