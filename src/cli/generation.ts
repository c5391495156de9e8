/**
 * What `check` and `try` share: load the config (reading, never generating,
 * tokens from the data dir) and build a generation without starting anything.
 */
import { resolve } from 'node:path';
import { loadConfig, type LoadedConfig } from '../config/load.ts';
import { createLogger } from '../log.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { buildGeneration, type Generation } from '../runtime/generation.ts';
import { resolveDataDir } from './args.ts';
import { dataDirTokens } from './tokens.ts';

export async function offlineGeneration(configFlag: string | undefined, dataFlag: string | undefined): Promise<{ gen: Generation; loaded: LoadedConfig }> {
  const dataDir = resolve(resolveDataDir(dataFlag));
  const loaded = loadConfig({ file: configFlag, dataDir, tokenFallback: dataDirTokens(dataDir, false).fallback });
  const gen = await buildGeneration(loaded, { builtins: builtinPlugins, logger: createLogger('silent') });
  return { gen, loaded };
}
