/**
 * What `check` and `try` share: load the config (reading, never generating,
 * tokens from the data dir) and build a generation without starting anything.
 */
import { findConfigFile, loadConfig, type LoadedConfig } from '../config/load.ts';
import { createLogger } from '../log.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { buildGeneration } from '../generation/build.ts';
import type { Generation } from '../generation/types.ts';
import { resolveDataDir, type DataDir } from './args.ts';
import { dataDirTokens } from './tokens.ts';

export interface OfflineGeneration {
  gen: Generation;
  loaded: LoadedConfig;
  data: DataDir;
  /** Tokens `serve` has not generated yet (an unsaved one stands in). */
  notYet: ReadonlySet<'hooks' | 'gateway'>;
}

export async function offlineGeneration(configFlag: string | undefined, dataFlag: string | undefined): Promise<OfflineGeneration> {
  const file = findConfigFile({ file: configFlag });
  const data = resolveDataDir(dataFlag, file);
  const tokens = dataDirTokens(data.dir, false);
  const loaded = loadConfig({ file, dataDir: data.dir, tokenFallback: tokens.fallback });
  const gen = await buildGeneration(loaded, { builtins: builtinPlugins, logger: createLogger('silent') });
  return { gen, loaded, data, notYet: tokens.notYet };
}
