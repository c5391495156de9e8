/**
 * `hook-intake check`: validate the config, build a generation (plugins,
 * mappings, transforms) without starting anything, print a summary. Exit 1
 * with `file: key.path: reason` lines when something is wrong.
 */
import { resolve } from 'node:path';
import { loadConfig } from '../config/load.ts';
import { ConfigError, formatIssue } from '../errors.ts';
import { createLogger } from '../log.ts';
import { createRegistry } from '../plugins/registry.ts';
import { builtinPlugins } from '../../plugins/index.ts';
import { buildGeneration, type Generation } from '../runtime/generation.ts';
import { commonOptions, parse, resolveDataDir, UsageError } from './args.ts';
import { dataDirTokens } from './tokens.ts';

export async function check(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parse(argv, commonOptions));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`hook-intake check: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const dataDir = resolve(resolveDataDir(values.data));
  try {
    const loaded = loadConfig({ file: values.config, dataDir, tokenFallback: dataDirTokens(dataDir, false).fallback });
    const registry = createRegistry();
    for (const p of builtinPlugins) registry.register(p);
    const gen = buildGeneration(loaded, { registry, logger: createLogger('silent') });
    process.stdout.write(summary(gen, loaded.fallbackTokens));
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration is invalid:\n${err.issues.map((i) => `  ${formatIssue(i)}`).join('\n')}\n`);
      return 1;
    }
    throw err;
  }
}

export function summary(gen: Generation, fallbackTokens: readonly string[]): string {
  const c = gen.config;
  const lines = [`config: ${gen.file ?? '(embedded defaults)'} is valid`];
  if (c.hooks.enabled) {
    const token = fallbackTokens.includes('hooks') ? 'from the data dir' : 'set';
    lines.push(`hooks: enabled at ${c.hooks.path} (token ${token}; max body ${c.hooks.maxBodyBytes} bytes; query token ${c.hooks.allowQueryToken ? 'accepted, deprecated' : 'refused'})`);
  } else lines.push('hooks: disabled');
  lines.push(`mappings: ${c.hooks.mappings.length}; presets: ${c.hooks.presets.length ? c.hooks.presets.join(', ') : 'none'}`);
  lines.push(`read API: ${c.gateway.auth.token ? 'enabled' : 'disabled (gateway.auth.token not set)'} on ${c.gateway.bind}:${c.gateway.port}`);
  lines.push(`agents: default model ${c.agents.defaults.model}; allowlist ${c.agents.defaults.models ? c.agents.defaults.models.join(', ') : 'not set (any configured provider)'}`);
  lines.push(`providers: ${Object.entries(c.agents.providers).map(([id, p]) => `${id} (${p.type})`).join(', ')}`);
  lines.push(`channels: ${[...gen.channels.values()].map((ch) => `${ch.id} (${ch.type})`).join(', ') || 'none'}`);
  lines.push(`storage: ${c.storage.driver} ${c.storage.path} (synchronous=${c.storage.synchronous})`);
  for (const w of gen.warnings) lines.push(`warning: ${w}`);
  return `${lines.join('\n')}\n`;
}
