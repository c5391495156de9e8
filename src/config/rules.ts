/**
 * Rules a JSON Schema cannot express: cross-key constraints and
 * normalisation. Mutates the (already validated, defaults-filled) config and
 * returns issues.
 */
import { didYouMean } from '../util/did-you-mean.ts';
import { isAbsolute, resolve } from 'node:path';
import type { ConfigIssue } from '../errors.ts';
import type { Config } from './schema.ts';
import { STORAGE_DRIVERS, storageKeys, type StorageConfig } from './storage.ts';

const RESERVED_PREFIXES = ['/api', '/ui', '/healthz', '/readyz', '/metrics'];
const MIN_TOKEN_LENGTH = 24;

export interface RuleContext {
  file: string;
  dir: string;
  cwd: string;
  dataDir: string;
  warnings: string[];
}

/** `hooks.path` normalised: leading `/` added, trailing `/` removed. Returns undefined when invalid. */
export function normaliseHooksPath(p: string): string | undefined {
  let s = p.trim();
  if (!s.startsWith('/')) s = `/${s}`;
  s = s.replace(/\/+$/, '');
  if (!s || !/^(\/[A-Za-z0-9._~-]+)+$/.test(s)) return undefined;
  return s;
}

export function splitModel(model: string): { provider: string; model: string } | undefined {
  const i = model.indexOf('/');
  if (i <= 0 || i === model.length - 1) return undefined;
  return { provider: model.slice(0, i), model: model.slice(i + 1) };
}

export function applyRules(config: Config, ctx: RuleContext): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const issue = (path: string, message: string) => issues.push({ file: ctx.file, path, message });
  const { hooks, gateway, agents } = config;

  const normalised = normaliseHooksPath(hooks.path);
  if (!normalised) issue('hooks.path', `"${hooks.path}" is not a usable path prefix (use e.g. "/hooks"; "/" alone is not allowed)`);
  else if (RESERVED_PREFIXES.some((r) => normalised === r || normalised.startsWith(`${r}/`)))
    issue('hooks.path', `"${normalised}" collides with a built-in endpoint (${RESERVED_PREFIXES.join(', ')})`);
  else hooks.path = normalised;

  if (hooks.enabled && !hooks.token) issue('hooks.token', 'required when hooks.enabled is true');
  if (hooks.token && gateway.auth.token && hooks.token === gateway.auth.token)
    issue('hooks.token', 'must differ from gateway.auth.token (use a separate secret for hooks)');
  if (hooks.enabled && hooks.token && hooks.token.length < MIN_TOKEN_LENGTH)
    ctx.warnings.push(`hooks.token is shorter than ${MIN_TOKEN_LENGTH} characters; use a long random secret`);

  const checkModel = (path: string, model: string) => {
    const parts = splitModel(model);
    if (!parts) return issue(path, `"${model}" must have the form provider/model`);
    if (!Object.hasOwn(agents.providers, parts.provider))
      issue(path, `provider "${parts.provider}" is not configured under agents.providers`);
  };
  checkModel('agents.defaults.model', agents.defaults.model);
  for (const [i, m] of (agents.defaults.models ?? []).entries()) checkModel(`agents.defaults.models[${i}]`, m);
  agentRules(config, checkModel, issue);

  const route = config.session.defaultRoute;
  if (route && !Object.hasOwn(config.channels, route.channel))
    issue('session.defaultRoute.channel', `channel "${route.channel}" is not configured under channels`);

  for (const id of Object.keys(config.channels)) {
    if (id === 'last') issue(`channels.last`, '"last" is reserved (it means the main route)');
  }

  hooks.transformsDir = resolve(ctx.dir, hooks.transformsDir ?? 'transforms');
  storageRules(config.storage, ctx, issue);

  const ids = new Set<string>();
  hooks.mappings.forEach((m, i) => {
    m.id ??= `mapping-${i + 1}`;
    if (ids.has(m.id)) issue(`hooks.mappings[${i}].id`, `duplicate mapping id "${m.id}"`);
    ids.add(m.id);
  });
  return issues;
}

/**
 * `agents.list` and `hooks.allowedAgentIds` (docs/agents.md): ids once each, at most one default, each
 * agent's model in its own `models` and of a configured provider, the allowed ids known.
 */
function agentRules(
  config: Config,
  checkModel: (path: string, model: string) => void,
  issue: (path: string, message: string) => void,
): void {
  const list = config.agents.list ?? [];
  const ids = new Set<string>();
  let defaults = 0;
  for (const [i, a] of list.entries()) {
    const at = `agents.list[${i}]`;
    if (ids.has(a.id)) issue(`${at}.id`, `duplicate agent id "${a.id}"`);
    ids.add(a.id);
    if (a.default && ++defaults > 1) issue(`${at}.default`, 'only one agent may be the default');
    if (a.model !== undefined) checkModel(`${at}.model`, a.model);
    for (const [j, m] of (a.models ?? []).entries()) checkModel(`${at}.models[${j}]`, m);
    const models = a.models ?? config.agents.defaults.models;
    const model = a.model ?? config.agents.defaults.model;
    if (models && !models.includes(model)) issue(`${at}.model`, `"${model}" is not one of the agent's models`);
  }
  if (!list.length) ids.add('main');
  for (const [i, id] of (config.hooks.allowedAgentIds ?? []).entries()) {
    if (id === '*' || ids.has(id)) continue;
    const hint = didYouMean(id, [...ids]);
    issue(
      `hooks.allowedAgentIds[${i}]`,
      `"${id}" is not an agent${hint ? ` (did you mean "${hint}"?)` : ''}; agents: ${[...ids].join(', ')}`,
    );
  }
}

/**
 * `storage` as its driver takes it: the SQLite file resolved (against the config's directory, or the
 * data directory's `hook-intake.db`), the Redis url present, and the other driver's keys, which the
 * schema accepts, dropped. Whether the url or file is usable is the store's to say (src/store/config.ts).
 */
function storageRules(storage: StorageConfig, ctx: RuleContext, issue: (path: string, message: string) => void): void {
  const given = storage as unknown as Record<string, unknown>;
  if (storage.driver === 'redis') {
    if (!storage.url) issue('storage.url', "the redis driver needs the server's url (redis://host:port/db or unix:///path/to/redis.sock)");
  } else {
    if (given.url !== undefined) issue('storage.url', 'only the redis driver takes a url (storage.driver is "sqlite")');
    storage.path = storage.path
      ? isAbsolute(storage.path)
        ? storage.path
        : resolve(ctx.dir, storage.path)
      : resolve(ctx.dataDir, 'hook-intake.db');
  }
  for (const driver of STORAGE_DRIVERS) if (driver !== storage.driver) for (const k of storageKeys[driver]) delete given[k];
}
