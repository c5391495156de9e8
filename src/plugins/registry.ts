/**
 * The registry of what plugins contribute. Registering refuses a name that is
 * already taken (two plugins cannot both own `openai`) and returns a dispose
 * function that removes exactly what it added.
 */
import type { AgentProviderFactory, ChannelFactory, Plugin, PresetDefinition } from './define.ts';

export interface Registry {
  register(plugin: Plugin, origin?: string): () => void;
  agent(type: string): AgentProviderFactory | undefined;
  channel(type: string): ChannelFactory | undefined;
  preset(name: string): PresetDefinition | undefined;
  agentTypes(): string[];
  channelTypes(): string[];
  presetNames(): string[];
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
  const agents = new Map<string, { owner: string; factory: AgentProviderFactory }>();
  const channels = new Map<string, { owner: string; factory: ChannelFactory }>();
  const presets = new Map<string, { owner: string; preset: PresetDefinition }>();

  return {
    register(plugin, origin = 'built-in') {
      if (!plugin || typeof plugin.name !== 'string' || !plugin.name) throw new Error(`plugin from ${origin} has no name`);
      if (plugins.has(plugin.name)) throw new Error(`plugin "${plugin.name}" is already registered (from ${plugins.get(plugin.name)})`);
      const check = <T>(kind: string, map: Map<string, { owner: string } & T>, names: string[]) => {
        for (const n of names) {
          const existing = map.get(n);
          if (existing) throw new DuplicateRegistrationError(kind, n, existing.owner, plugin.name);
        }
      };
      const agentNames = Object.keys(plugin.agents ?? {});
      const channelNames = Object.keys(plugin.channels ?? {});
      const presetNames = Object.keys(plugin.presets ?? {});
      check('agent provider', agents, agentNames);
      check('channel', channels, channelNames);
      check('preset', presets, presetNames);
      // all checks passed: register everything or nothing
      plugins.set(plugin.name, origin);
      for (const n of agentNames) agents.set(n, { owner: plugin.name, factory: plugin.agents![n]! });
      for (const n of channelNames) channels.set(n, { owner: plugin.name, factory: plugin.channels![n]! });
      for (const n of presetNames) presets.set(n, { owner: plugin.name, preset: plugin.presets![n]! });
      return () => {
        if (plugins.get(plugin.name) !== origin) return;
        plugins.delete(plugin.name);
        for (const n of agentNames) if (agents.get(n)?.owner === plugin.name) agents.delete(n);
        for (const n of channelNames) if (channels.get(n)?.owner === plugin.name) channels.delete(n);
        for (const n of presetNames) if (presets.get(n)?.owner === plugin.name) presets.delete(n);
      };
    },
    agent: (t) => agents.get(t)?.factory,
    channel: (t) => channels.get(t)?.factory,
    preset: (n) => presets.get(n)?.preset,
    agentTypes: () => [...agents.keys()],
    channelTypes: () => [...channels.keys()],
    presetNames: () => [...presets.keys()],
    plugins: () => [...plugins].map(([name, origin]) => ({ name, origin })),
  };
}
