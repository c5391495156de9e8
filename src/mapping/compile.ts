/**
 * The compile step: config mappings and enabled presets → frozen pipelines.
 * Pure apart from resolving transform paths on disk. Order: user mappings,
 * then presets in `hooks.presets` order; the first whose match passes owns a
 * request. Every problem is reported with the file and the key path.
 */
import type { Config, MappingConfig } from '../config/schema.ts';
import { thinkingLevels } from '../config/schema.ts';
import { splitModel } from '../config/rules.ts';
import type { ConfigIssue } from '../errors.ts';
import { compileMatch, MatchError, trimSlashes } from './match.ts';
import { compileTemplate, TemplateError, type Template } from './template.ts';
import { parsePath, type PathError } from './path.ts';
import { TEMPLATED_FIELDS, type Pipeline, type TemplatedField } from './pipeline.ts';
import { resolveTransformModule } from '../transforms/resolve.ts';
import type { TransformSpec } from '../transforms/pool.ts';
import { BUILT_IN_HOOKS } from '../names.ts';
import type { Verifier } from '../plugins/define.ts';

export const DEFAULT_TRANSFORM_TIMEOUT_MS = 5000;

export interface PresetSource {
  name: string;
  mappings: readonly MappingConfig[];
  /** Directory the preset's transform modules resolve in. */
  transformsDir?: string;
  /** File the preset was read from, for error messages. */
  file?: string;
}

export interface CompileInput {
  config: Config;
  /** The config file (or a label), for error messages. */
  file: string;
  /** Enabled presets, in `hooks.presets` order. */
  presets: readonly PresetSource[];
  /**
   * Makes the verifier a mapping's `verify` names (looked up here, once, not per
   * request), or says what is wrong with it; `key` identifies the mapping
   * across reloads (instances.ts `InstanceMaker.verifier`).
   */
  verifier: MakeVerifier;
}

export type MakeVerifier = (
  key: string,
  mappingId: string,
  spec: { type: string },
) => { verifier?: Verifier; issues: { path: string; message: string }[] };

export interface CompileResult {
  pipelines: Pipeline[];
  /** Lower-case names of the headers the mappings take a signature from (`verify.header`): credentials, never shown or kept. */
  credentialHeaders: Set<string>;
  transforms: TransformSpec[];
  issues: ConfigIssue[];
}

/** `hooks.<preset>.model` / `.allowUnsafeExternalContent` apply to that preset's mappings (e.g. `hooks.gmail`). */
function presetOverrides(config: Config, name: string): Partial<MappingConfig> {
  const section = (config.hooks as Record<string, unknown>)[name];
  if (!section || typeof section !== 'object') return {};
  const s = section as { model?: unknown; allowUnsafeExternalContent?: unknown };
  const out: Partial<MappingConfig> = {};
  if (typeof s.model === 'string') out.model = s.model;
  if (typeof s.allowUnsafeExternalContent === 'boolean') out.allowUnsafeExternalContent = s.allowUnsafeExternalContent;
  return out;
}

export function compilePipelines(input: CompileInput): CompileResult {
  const { config } = input;
  const issues: ConfigIssue[] = [];
  const pipelines: Pipeline[] = [];
  const transforms = new Map<string, TransformSpec>();
  const sources: {
    mapping: MappingConfig;
    base: string;
    file: string;
    dir: string;
    origin: string;
    fallbackId: string;
    preset?: string;
  }[] = [];

  for (const [i, m] of config.hooks.mappings.entries())
    sources.push({
      mapping: m,
      base: `hooks.mappings[${i}]`,
      file: input.file,
      dir: config.hooks.transformsDir!,
      origin: `hooks.mappings[${i}]`,
      fallbackId: `mapping-${i + 1}`,
    });
  for (const preset of input.presets) {
    const overrides = presetOverrides(config, preset.name);
    for (const [i, m] of preset.mappings.entries())
      sources.push({
        mapping: { ...m, ...overrides },
        base: `mappings[${i}]`,
        file: preset.file ?? `preset ${preset.name}`,
        dir: preset.transformsDir ?? config.hooks.transformsDir!,
        origin: `preset ${preset.name} (mappings[${i}])`,
        preset: preset.name,
        fallbackId: `${preset.name}-${i + 1}`,
      });
  }

  const channels = new Set(['last', ...Object.keys(config.channels)]);
  for (const src of sources) {
    const before = issues.length;
    const p = compileOne(src, config, channels, transforms, input.verifier, (path, message) =>
      issues.push({ file: src.file, path: `${src.base}.${path}`.replace(/\.$/, ''), message }),
    );
    if (p && issues.length === before) pipelines.push(p);
  }
  const credentialHeaders = new Set<string>();
  for (const { mapping } of sources) {
    const h = (mapping.verify as { header?: unknown } | undefined)?.header;
    if (typeof h === 'string') credentialHeaders.add(h.toLowerCase());
  }
  return { pipelines, credentialHeaders, transforms: [...transforms.values()], issues };
}

function compileOne(
  src: { mapping: MappingConfig; dir: string; origin: string; fallbackId: string; preset?: string },
  config: Config,
  channels: Set<string>,
  transforms: Map<string, TransformSpec>,
  makeVerifier: MakeVerifier,
  issue: (path: string, message: string) => void,
): Pipeline | undefined {
  const m = src.mapping;
  const id = m.id ?? src.fallbackId;

  let matcher;
  try {
    matcher = compileMatch(m.match);
  } catch (err) {
    if (err instanceof MatchError) issue(err.path, `${err.message} (mapping "${id}")`);
    else throw err;
    return undefined;
  }
  const path = m.match?.path !== undefined ? trimSlashes(m.match.path) : undefined;
  if (path !== undefined && BUILT_IN_HOOKS.has(path))
    issue('match.path', `"${path}" is reserved for the built-in endpoint (mapping "${id}")`);

  let forEach: Pipeline['forEach'];
  if (m.forEach !== undefined) {
    try {
      const segs = parsePath(m.forEach);
      if (segs.length !== 1) issue('forEach', `must name a top-level field of the payload, not a path (mapping "${id}")`);
      else forEach = { field: String(segs[0]), segs };
    } catch (err) {
      issue('forEach', `${(err as PathError).message} (mapping "${id}")`);
    }
  }

  const templates: Partial<Record<TemplatedField, Template>> = {};
  for (const field of TEMPLATED_FIELDS) {
    const source = m[field];
    if (source === undefined) continue;
    try {
      templates[field] = compileTemplate(source, { forEach: forEach?.field });
    } catch (err) {
      if (err instanceof TemplateError) issue(field, `${err.message} (mapping "${id}")`);
      else throw err;
    }
  }

  checkStatics(m, templates, config, channels, (path, message) => issue(path, `${message} (mapping "${id}")`));

  let transform: Pipeline['transform'];
  if (m.transform) {
    const r = resolveTransformModule(src.dir, m.transform.module);
    if ('error' in r) issue('transform.module', `${r.error} (mapping "${id}")`);
    else {
      const key = `${r.file}#${m.transform.export ?? ''}`;
      if (!transforms.has(key))
        transforms.set(key, { key, file: r.file, ...(m.transform.export ? { exportName: m.transform.export } : {}) });
      transform = { key, file: r.file, timeoutMs: m.transform.timeoutMs ?? DEFAULT_TRANSFORM_TIMEOUT_MS };
    }
  }

  let verify: Verifier | undefined;
  if (m.verify) {
    const made = makeVerifier(src.origin, id, m.verify);
    for (const pr of made.issues) issue(pr.path, `${pr.message} (mapping "${id}")`);
    verify = made.verifier;
  }

  const event = requestTemplate(m.event, 'event', issue, id);
  const idempotencyKey = requestTemplate(m.idempotencyKey, 'idempotencyKey', issue, id);
  if (m.events && !event) issue('events', `needs \`event\`, the template that names a request's event type (mapping "${id}")`);

  const statics: { -readonly [K in keyof Pipeline['statics']]: Pipeline['statics'][K] } = {};
  if (m.sessionMode !== undefined) statics.sessionMode = m.sessionMode;
  if (m.wakeMode !== undefined) statics.wakeMode = m.wakeMode;
  if (m.deliver !== undefined) statics.deliver = m.deliver;
  if (m.channel !== undefined) statics.channel = m.channel;
  if (m.timeoutSeconds !== undefined) statics.timeoutSeconds = m.timeoutSeconds;

  return Object.freeze({
    id,
    origin: src.origin,
    preset: src.preset,
    path,
    matcher,
    action: m.action,
    forEach,
    templates: Object.freeze(templates),
    statics: Object.freeze(statics),
    transform,
    label: m.label,
    trusted: m.allowUnsafeExternalContent === true,
    rateLimit: m.rateLimit ? Object.freeze({ ...m.rateLimit }) : undefined,
    verify,
    verifyType: m.verify?.type,
    event,
    events: m.events ? new Set(m.events) : undefined,
    idempotencyKey,
    maxChars: m.maxChars,
    callbacks: m.callbacks,
  });
}

/** A template over the request alone (no `forEach` item): a mapping's `event` or `idempotencyKey`. */
function requestTemplate(
  source: string | undefined,
  field: string,
  issue: (path: string, message: string) => void,
  id: string,
): Template | undefined {
  if (source === undefined) return undefined;
  try {
    return compileTemplate(source);
  } catch (err) {
    if (err instanceof TemplateError) issue(field, `${err.message} (mapping "${id}")`);
    else throw err;
    return undefined;
  }
}

/**
 * What a mapping fixes without templates, checked at load as a request's value would be at intake: a
 * literal channel is configured, a literal agent exists and may be named, a literal model is one its
 * agent may use, of a configured provider; a literal thinking level is one there is.
 */
function checkStatics(
  m: MappingConfig,
  templates: Partial<Record<TemplatedField, Template>>,
  config: Config,
  channels: Set<string>,
  issue: (path: string, message: string) => void,
): void {
  if (m.channel !== undefined && !channels.has(m.channel)) issue('channel', `"${m.channel}" is not "last" or a configured channel`);
  const list = config.agents.list;
  const agentIds = list?.length ? list.map((a) => a.id) : ['main'];
  const staticAgent = templates.agentId?.isStatic ? m.agentId : undefined;
  const agent = list?.find((a) => a.id === staticAgent);
  if (staticAgent !== undefined) {
    const allowed = config.hooks.allowedAgentIds;
    if (!agentIds.includes(staticAgent)) issue('agentId', `"${staticAgent}" is not an agent; agents: ${agentIds.join(', ')}`);
    else if (allowed && !allowed.includes('*') && !allowed.includes(staticAgent))
      issue('agentId', `"${staticAgent}" is not in hooks.allowedAgentIds`);
  }
  const staticModel = templates.model?.isStatic ? m.model : undefined;
  if (staticModel !== undefined) {
    const parts = splitModel(staticModel);
    const models = agent?.models ?? config.agents.defaults.models;
    if (models && !models.includes(staticModel))
      issue(
        'model',
        agent?.models
          ? `"${staticModel}" is not one of the models of agent "${agent.id}"`
          : `"${staticModel}" is not in agents.defaults.models`,
      );
    else if (!parts) issue('model', `"${staticModel}" must have the form provider/model`);
    else if (!Object.hasOwn(config.agents.providers, parts.provider))
      issue('model', `provider "${parts.provider}" is not configured under agents.providers`);
  }
  if (templates.thinking?.isStatic && m.thinking !== undefined && !thinkingLevels.includes(m.thinking))
    issue('thinking', `"${m.thinking}" is not one of ${thinkingLevels.join(', ')}`);
  if (m.action === 'deliver' && m.transform === undefined && m.messageTemplate === undefined)
    issue('messageTemplate', 'is required by action "deliver" without a transform: it is the message sent');
}
