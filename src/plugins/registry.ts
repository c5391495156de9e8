/**
 * The registry of what plugins contribute. Registering refuses a name that is
 * already taken (two plugins cannot both own `openai`) and returns a dispose
 * function that removes exactly what it added. Each contribution remembers the
 * module it came from (`moduleKey`), so a reload can tell an unchanged plugin.
 */
import type { AgentProviderFactory, ChannelFactory, Plugin, PresetDefinition, ServiceFactory, VerifierFactory } from './define.ts';

/** The kinds of instance a config entry makes from a plugin factory. */
export type InstanceKind = 'provider' | 'channel' | 'verifier' | 'service';

interface Contributions {
  provider: AgentProviderFactory;
  channel: ChannelFactory;
  verifier: VerifierFactory;
  service: ServiceFactory;
  preset: PresetDefinition;
}
type Kind = keyof Contributions;

/** The plugin field holding each kind, and the word error messages use for it. */
const FIELDS: Record<Kind, { field: 'agents' | 'channels' | 'verifiers' | 'services' | 'presets'; word: string }> = {
  provider: { field: 'agents', word: 'agent provider' },
  channel: { field: 'channels', word: 'channel' },
  verifier: { field: 'verifiers', word: 'verifier' },
  service: { field: 'services', word: 'service' },
  preset: { field: 'presets', word: 'preset' },
};
const KINDS = Object.keys(FIELDS) as Kind[];

interface Entry<T> {
  owner: string;
  moduleKey: string;
  value: T;
}

export interface Registry {
  /** `moduleKey` names the plugin's code as loaded (a file's content hash); the origin by default. */
  register(plugin: Plugin, origin?: string, moduleKey?: string): () => void;
  agent(type: string): AgentProviderFactory | undefined;
  channel(type: string): ChannelFactory | undefined;
  verifier(type: string): VerifierFactory | undefined;
  service(type: string): ServiceFactory | undefined;
  preset(name: string): PresetDefinition | undefined;
  agentTypes(): string[];
  channelTypes(): string[];
  verifierTypes(): string[];
  serviceTypes(): string[];
  presetNames(): string[];
  /** The module a factory came from; equal keys mean the same plugin code. */
  moduleKey(kind: InstanceKind, type: string): string | undefined;
  plugins(): { name: string; origin: string }[];
}

export class DuplicateRegistrationError extends Error {
  constructor(kind: string, name: string, owner: string, plugin: string) {
    super(`plugin "${plugin}" registers ${kind} "${name}", already registered by plugin "${owner}"`);
    this.name = 'DuplicateRegistrationError';
  }
}

export function createRegistry(): Registry {
  const plugins = new Map<string, string>();
  const maps = Object.fromEntries(KINDS.map((k) => [k, new Map<string, Entry<unknown>>()])) as {
    [K in Kind]: Map<string, Entry<Contributions[K]>>;
  };
  const get = <K extends Kind>(kind: K, name: string) => maps[kind].get(name)?.value as Contributions[K] | undefined;
  const names = (kind: Kind) => [...maps[kind].keys()];

  return {
    register(plugin, origin = 'built-in', moduleKey = `${origin}#${plugin?.name}`) {
      if (!plugin || typeof plugin.name !== 'string' || !plugin.name) throw new Error(`plugin from ${origin} has no name`);
      if (plugins.has(plugin.name)) throw new Error(`plugin "${plugin.name}" is already registered (from ${plugins.get(plugin.name)})`);
      const contributed = KINDS.map((kind) => ({ kind, entries: Object.entries(plugin[FIELDS[kind].field] ?? {}) }));
      for (const { kind, entries } of contributed) {
        for (const [n] of entries) {
          const existing = maps[kind].get(n);
          if (existing) throw new DuplicateRegistrationError(FIELDS[kind].word, n, existing.owner, plugin.name);
        }
      }
      // all checks passed: register everything or nothing
      plugins.set(plugin.name, origin);
      for (const { kind, entries } of contributed)
        for (const [n, value] of entries) maps[kind].set(n, { owner: plugin.name, moduleKey, value } as never);
      return () => {
        if (plugins.get(plugin.name) !== origin) return;
        plugins.delete(plugin.name);
        for (const { kind, entries } of contributed)
          for (const [n] of entries) if (maps[kind].get(n)?.owner === plugin.name) maps[kind].delete(n);
      };
    },
    agent: (t) => get('provider', t),
    channel: (t) => get('channel', t),
    verifier: (t) => get('verifier', t),
    service: (t) => get('service', t),
    preset: (n) => get('preset', n),
    agentTypes: () => names('provider'),
    channelTypes: () => names('channel'),
    verifierTypes: () => names('verifier'),
    serviceTypes: () => names('service'),
    presetNames: () => names('preset'),
    moduleKey: (kind, t) => maps[kind].get(t)?.moduleKey,
    plugins: () => [...plugins].map(([name, origin]) => ({ name, origin })),
  };
}
