/**
 * A generation: the immutable snapshot a request reads — validated config,
 * token matchers, plugin instances, compiled pipelines and the transform
 * workers. A reload builds a new one beside the current and swaps one
 * reference; requests in flight keep the generation they started with, and a
 * retired generation is disposed once its last request is done.
 */
import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/load.ts';
import type { Generation } from './types.ts';
import { agentsOf } from './agents.ts';
import { ConfigError, type ConfigIssue } from '../errors.ts';
import { createTokenMatcher } from '../auth/token.ts';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Plugin } from '../plugins/define.ts';
import { createRegistry, type Registry } from '../plugins/registry.ts';
import { loadPluginModule, pluginPath } from '../plugins/load.ts';
import { didYouMean } from '../util/did-you-mean.ts';
import type { Pipeline } from '../mapping/pipeline.ts';
import { compileCallbacks } from '../callbacks/plan.ts';
import { compilePipelines, type PresetSource } from '../mapping/compile.ts';
import { BUILTIN_PRESETS_DIR, loadPresetsDir } from '../presets/load.ts';
import { createTransformPool, TransformLoadError, type TransformPool, type WorkerSource } from '../transforms/pool.ts';
import { signatureVerifiers } from '../auth/verifiers.ts';
import { storageIssues } from '../store/config.ts';
import { presetEntry, presetMappings } from '../presets/instantiate.ts';
import { createInstanceMaker, instantiatePlugins, releaseInstances, startInstances, type InstanceMaker, type Submit } from './instances.ts';

export interface BuildDeps {
  logger: Logger;
  fetch?: typeof fetch;
  env?: Record<string, string | undefined>;
  /** Plugins registered before user plugins (the built-ins). */
  builtins: readonly Plugin[];
  /** Where built-in presets live (`presets/`). */
  presetsDir?: string;
  /** Warm transform workers (serve keeps some for fast reloads). */
  workers?: WorkerSource;
  clock?: () => number;
  /** The live generation, whose unchanged plugin instances the new one carries over. */
  previous?: Generation | undefined;
  /** How a plugin instance's `ctx.dispatch` reaches the dispatcher. */
  submit?: Submit;
}

let nextId = 1;

/** Names a plugin file's code as loaded: an unchanged file keeps its instances across a reload. */
function fileKey(path: string): string {
  return `${path}#${createHash('sha256').update(readFileSync(path)).digest('base64url')}`;
}

/** The files and directories a generation is built from (what the watcher watches). */
interface SourceList {
  files: string[];
  dirs: string[];
}

/** The registry of built-ins, the built-in presets and the config's plugins; a plugin that does not load is an issue. */
async function loadRegistry(loaded: LoadedConfig, deps: BuildDeps, issues: ConfigIssue[], sources: SourceList): Promise<Registry> {
  const file = loaded.file ?? '(embedded defaults)';
  const registry = createRegistry();
  registry.register(signatureVerifiers);
  for (const p of deps.builtins) registry.register(p);
  const presetsDir = deps.presetsDir ?? BUILTIN_PRESETS_DIR;
  const builtinPresets = loadPresetsDir(presetsDir);
  issues.push(...builtinPresets.issues);
  sources.dirs.push(presetsDir);
  registry.register({ name: 'presets', presets: Object.fromEntries(builtinPresets.presets) }, presetsDir);

  for (const [i, entry] of loaded.config.plugins.entries()) {
    const path = pluginPath(loaded.dir, entry);
    sources.files.push(path);
    try {
      const plugin = await loadPluginModule(path);
      registry.register(plugin, path, fileKey(path));
      for (const preset of Object.values(plugin.presets ?? {})) if (preset.transformsDir) sources.dirs.push(preset.transformsDir);
    } catch (err) {
      issues.push({ file, path: `plugins[${i}]`, message: `${entry}: ${(err as Error).message}` });
    }
  }
  return registry;
}

/**
 * The presets `hooks.presets` enables, in order, each as the mappings it adds (src/presets/instantiate.ts);
 * an unknown name, an option it does not take, and a path two entries share are issues.
 */
function namedPresets(loaded: LoadedConfig, registry: Registry, issues: ConfigIssue[]): PresetSource[] {
  const file = loaded.file ?? '(embedded defaults)';
  const presets: PresetSource[] = [];
  const paths = new Map<string, number>();
  for (const [i, raw] of loaded.config.hooks.presets.entries()) {
    const entry = presetEntry(raw);
    const at = `hooks.presets[${i}]`;
    const def = registry.preset(entry.name);
    if (!def) {
      const hint = didYouMean(entry.name, registry.presetNames());
      const where = typeof raw === 'string' ? at : `${at}.name`;
      const known = registry.presetNames().join(', ') || 'none';
      issues.push({
        file,
        path: where,
        message: `unknown preset "${entry.name}"${hint ? ` (did you mean "${hint}"?)` : ''}; known: ${known}`,
      });
      continue;
    }
    const made = presetMappings(def, entry);
    for (const p of made.issues) issues.push({ file, path: p.path ? `${at}.${p.path}` : at, message: p.message });
    for (const m of made.mappings) {
      const path = m.match?.path;
      if (path === undefined) continue;
      const first = paths.get(path);
      if (first !== undefined && first !== i)
        issues.push({
          file,
          path: `${at}.path`,
          message: `"${path}" is already the path of hooks.presets[${first}]; give this one a path of its own`,
        });
      paths.set(path, i);
    }
    if (made.issues.length) continue;
    presets.push({
      name: entry.name,
      mappings: made.mappings,
      ...(def.transformsDir ? { transformsDir: def.transformsDir } : {}),
      ...(def.file ? { file: def.file } : {}),
    });
  }
  return presets;
}

/** The transform pool of the compiled pipelines; a transform that does not load is a `ConfigError` naming its mappings. */
async function startTransforms(
  loaded: LoadedConfig,
  compiled: ReturnType<typeof compilePipelines>,
  instances: InstanceMaker,
  deps: BuildDeps,
): Promise<TransformPool> {
  try {
    return await createTransformPool(compiled.transforms, {
      max: loaded.config.hooks.transformWorkers,
      ...(deps.workers ? { source: deps.workers } : {}),
      onWorkerError: (err) => deps.logger.error({ err: { message: err.message } }, 'transform worker error'),
    });
  } catch (err) {
    void releaseInstances(instances.held);
    if (!(err instanceof TransformLoadError)) throw err;
    const origins = new Map<string, string[]>();
    for (const p of compiled.pipelines) if (p.transform) origins.set(p.transform.key, [...(origins.get(p.transform.key) ?? []), p.origin]);
    throw new ConfigError(
      err.errors.map((e) => ({
        file: e.key.split('#')[0] ?? loaded.file ?? '(embedded defaults)',
        path: (origins.get(e.key) ?? []).map((o) => `${o}.transform`).join(', '),
        message: e.message,
        ...(e.line !== undefined ? { line: e.line } : {}),
      })),
    );
  }
}

/** Builds a generation; throws `ConfigError` listing every problem, leaving nothing running. */
export async function buildGeneration(loaded: LoadedConfig, deps: BuildDeps): Promise<Generation> {
  const { config } = loaded;
  const file = loaded.file ?? '(embedded defaults)';
  const issues: ConfigIssue[] = [];
  const sources: SourceList = { files: loaded.file ? [loaded.file] : [], dirs: [config.hooks.transformsDir!] };
  const registry = await loadRegistry(loaded, deps, issues, sources);
  const presets = namedPresets(loaded, registry, issues);
  const instances = createInstanceMaker(registry, file, issues, instanceDeps(loaded, deps), deps.previous?.instances);
  const compiled = compilePipelines({ config, file, presets, verifier: instances.verifier });
  issues.push(...compiled.issues);
  // whether the store can use its settings (a Redis url it cannot read) is the store's to say
  for (const i of storageIssues(config.storage)) issues.push({ file, ...i });
  const transforms = !issues.length && compiled.transforms.length ? await startTransforms(loaded, compiled, instances, deps) : undefined;
  return assembleGeneration(
    loaded,
    {
      registry,
      instances,
      pipelines: compiled.pipelines,
      credentialHeaders: compiled.credentialHeaders,
      transforms,
      sources: { files: [...new Set(sources.files)], dirs: [...new Set(sources.dirs)] },
      issues,
    },
    deps,
  );
}

export interface GenerationParts {
  registry: Registry;
  /** The maker the pipelines' verifiers came from; a new one (carrying over from `deps.previous`) when absent. */
  instances?: InstanceMaker;
  pipelines: readonly Pipeline[];
  /** See `Generation.credentialHeaders` (none when absent). */
  credentialHeaders?: ReadonlySet<string>;
  transforms?: TransformPool | undefined;
  sources: Generation['sources'];
  /** Problems found so far; any (with those of the plugin instances) fail the build. */
  issues?: ConfigIssue[];
}

/**
 * The last, synchronous step of a build: create the provider and channel
 * instances, then freeze everything into a generation. Throws `ConfigError`
 * with every problem (those passed in and its own), releasing what it made.
 */
type InstanceBuildDeps = Pick<BuildDeps, 'logger' | 'fetch' | 'env' | 'clock' | 'previous' | 'submit'>;

function instanceDeps(loaded: LoadedConfig, deps: InstanceBuildDeps) {
  return {
    logger: deps.logger,
    fetch: deps.fetch ?? globalThis.fetch,
    env: deps.env ?? process.env,
    clock: deps.clock ?? Date.now,
    configDir: loaded.dir,
  };
}

export function assembleGeneration(loaded: LoadedConfig, parts: GenerationParts, deps: InstanceBuildDeps): Generation {
  const { config } = loaded;
  const file = loaded.file ?? '(embedded defaults)';
  const issues = [...(parts.issues ?? [])];
  const maker = parts.instances ?? createInstanceMaker(parts.registry, file, issues, instanceDeps(loaded, deps), deps.previous?.instances);
  const { providers, channels, services } = instantiatePlugins(config, parts.registry, maker, issues);
  const callbacks = compileCallbacks(config, parts.pipelines, file, issues);
  const held = maker.held;
  const transforms = parts.transforms;
  let disposed: Promise<void> | undefined;
  const dispose = () => (disposed ??= Promise.all([transforms?.close(), releaseInstances(held)]).then(() => undefined));
  if (issues.length) {
    // what was made belongs to a generation that will never run
    void dispose();
    throw new ConfigError(issues);
  }
  return Object.freeze({
    id: nextId++,
    loadedAt: Date.now(),
    file: loaded.file,
    config,
    hookToken: config.hooks.token ? createTokenMatcher(config.hooks.token) : undefined,
    gatewayToken: config.gateway.auth.token ? createTokenMatcher(config.gateway.auth.token) : undefined,
    agents: agentsOf(config),
    providers,
    channels,
    services,
    instances: held,
    pipelines: Object.freeze([...parts.pipelines]),
    credentialHeaders: parts.credentialHeaders ?? new Set<string>(),
    transforms,
    warnings: loaded.warnings,
    sources: parts.sources,
    unsafeHooks: parts.pipelines.filter((p) => p.trusted).map((p) => `${p.id} (${p.origin})`),
    signed: {
      paths: new Set(parts.pipelines.filter((p) => p.verify && p.path !== undefined).map((p) => p.path!)),
      anyPath: parts.pipelines.some((p) => p.verify && p.path === undefined),
    },
    callbacks,
    start: () => startInstances(held, deps.submit),
    dispose,
  });
}
