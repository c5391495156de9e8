/** What `startService` is started with (src/service.ts): how the config is loaded, and what tests and `serve` inject. */
import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/load.ts';
import type { Plugin } from '../plugins/define.ts';

export interface ServiceOptions {
  /** Loads (and re-loads, on change) the config. Throws `ConfigError`. */
  load: () => LoadedConfig;
  /** The config already loaded for this start (saves loading it twice). */
  initial?: LoadedConfig;
  logger: Logger;
  /** Overrides of `gateway.port` / `gateway.bind` (`--port`, `--bind`). */
  port?: number | undefined;
  bind?: string | undefined;
  clock?: () => number;
  fetch?: typeof fetch;
  env?: Record<string, string | undefined>;
  /** Watch the config, transforms, presets and plugins and reload on change (default true). */
  watch?: boolean;
  builtins?: readonly Plugin[];
  presetsDir?: string;
}
