/**
 * `hook-intake check`: validate the config, build a generation (plugins,
 * presets, mappings, every transform loaded in its worker) without starting
 * anything, print a summary. Exit 1 with `file: key.path: reason` lines when
 * something is wrong. With the Redis driver, also warns when the server's
 * persistence settings do not put an answered write on disk.
 */
import { ConfigError, formatIssue } from '../errors.ts';
import type { Generation } from '../generation/types.ts';
import { commonOptions, helpText, parse, UsageError, type DataDir } from './args.ts';
import { offlineGeneration } from './generation.ts';
import { describeStorage, inspectStorage } from '../store/config.ts';

export const CHECK_OPTIONS = commonOptions;

export const CHECK_HELP = helpText(
  'hook-intake check [options]',
  `Validates the config and builds everything serve would (plugins, presets, mappings, every
transform loaded in a worker) without starting anything, then prints a summary. Exits 1 with
"file: key.path: reason" lines when something is wrong. Reads the tokens serve generated in the
data directory; generates none.`,
  CHECK_OPTIONS,
);

export async function check(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parse(argv, CHECK_OPTIONS));
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`hook-intake check: ${err.message}\n(hook-intake check --help lists the options)\n`);
      return 1;
    }
    throw err;
  }
  if (values.help) {
    process.stdout.write(CHECK_HELP);
    return 0;
  }
  try {
    const { gen, loaded, data, notYet } = await offlineGeneration(values.config, values.data);
    try {
      process.stdout.write(summary(gen, loaded.fallbackTokens, notYet, data));
      const d = await inspectStorage(gen.config.storage);
      if (d) process.stdout.write(`${[d.line, ...d.warnings.map((w) => `warning: ${w}`)].join('\n')}\n`);
    } finally {
      await gen.dispose();
    }
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration is invalid:\n${err.issues.map((i) => `  ${formatIssue(i)}`).join('\n')}\n`);
      return 1;
    }
    throw err;
  }
}

export function summary(
  gen: Generation,
  fallbackTokens: readonly string[],
  notYet: ReadonlySet<string> = new Set(),
  data?: DataDir,
): string {
  const c = gen.config;
  const lines = [`config: ${gen.file ?? '(embedded defaults)'} is valid`];
  if (data) lines.push(`data directory: ${data.dir} (${data.from})`);
  if (c.hooks.enabled) {
    const token = notYet.has('hooks')
      ? 'not generated yet: serve generates it on first start'
      : fallbackTokens.includes('hooks')
        ? 'from the data dir'
        : 'set';
    lines.push(
      `hooks: enabled at ${c.hooks.path} (token ${token}; max body ${c.hooks.maxBodyBytes} bytes; query token ${c.hooks.allowQueryToken ? 'accepted, deprecated' : 'refused'})`,
    );
  } else lines.push('hooks: disabled');
  lines.push(`presets: ${c.hooks.presets.length ? c.hooks.presets.join(', ') : 'none'}`);
  lines.push(`named hooks (in match order): ${gen.pipelines.length}`);
  for (const p of gen.pipelines) {
    const bits = [p.action, p.path ? `path "${p.path}"` : 'matched by payload/headers'];
    if (p.forEach) bits.push(`forEach ${p.forEach.field}`);
    if (p.transform) bits.push(`transform ${p.transform.file}`);
    if (p.verify) bits.push('signature required');
    lines.push(`  - ${p.id} (${p.origin}): ${bits.join(', ')}`);
  }
  if (gen.transforms)
    lines.push(`transforms: every module loaded in a worker (the pool grows to ${c.hooks.transformWorkers} when calls wait)`);
  if (gen.unsafeHooks.length) {
    lines.push(`WARNING: the safety boundary is OFF for ${gen.unsafeHooks.length} hook(s) (allowUnsafeExternalContent):`);
    for (const h of gen.unsafeHooks) lines.push(`  - ${h}`);
  } else lines.push('safety boundary: on for every hook');
  const readApi = notYet.has('gateway')
    ? 'enabled (token not generated yet: serve generates it on first start)'
    : c.gateway.auth.token
      ? 'enabled'
      : 'disabled (gateway.auth.token not set)';
  lines.push(`read API: ${readApi} on ${c.gateway.bind}:${c.gateway.port}`);
  lines.push(
    `agents: default model ${c.agents.defaults.model}; allowlist ${c.agents.defaults.models ? c.agents.defaults.models.join(', ') : 'not set (any configured provider)'}`,
  );
  lines.push(
    `providers: ${Object.entries(c.agents.providers)
      .map(([id, p]) => `${id} (${p.type})`)
      .join(', ')}`,
  );
  lines.push(`channels: ${[...gen.channels.values()].map((ch) => `${ch.id} (${ch.type})`).join(', ') || 'none'}`);
  // the host only: a URL's path or query may carry a credential of the receiver's
  for (const cb of c.callbacks)
    lines.push(
      `callback ${cb.id}: ${new URL(cb.url).host}, ${cb.types.join(', ')}; ${
        cb.hooks === undefined ? 'every hook' : cb.hooks.length ? `hooks ${cb.hooks.join(', ')}` : 'only the mappings that name it'
      }${cb.allowPrivateNetwork ? '; private network allowed' : ''}`,
    );
  lines.push(`storage: ${describeStorage(c.storage)}`);
  for (const w of gen.warnings) lines.push(`warning: ${w}`);
  return `${lines.join('\n')}\n`;
}
