/**
 * The agents a generation runs (docs/agents.md): `agents.list`, each entry with what `agents.defaults`
 * says for what it leaves out; without a list, one agent `main` made of the defaults.
 */
import type { Config } from '../config/schema.ts';

export interface Agent {
  readonly id: string;
  /** `provider/model` of its runs unless a request or mapping names one. */
  readonly model: string;
  /** The only models its runs may select; undefined: any of a configured provider. */
  readonly models: ReadonlySet<string> | undefined;
  /** What it is told before every run (a system prompt); null: nothing. */
  readonly instructions: string | null;
  readonly timeoutSeconds: number;
  readonly thinking: string | null;
}

export interface Agents {
  readonly byId: ReadonlyMap<string, Agent>;
  /** The agent of a request or mapping that names none: the one marked `default`, else the first. */
  readonly defaultId: string;
  /** The agents a request or mapping may name (`hooks.allowedAgentIds`); undefined: all. */
  readonly allowed: ReadonlySet<string> | undefined;
}

export const MAIN_AGENT = 'main';

export function agentsOf(config: Config): Agents {
  const d = config.agents.defaults;
  const base = (id: string): Agent => ({
    id,
    model: d.model,
    models: d.models ? new Set(d.models) : undefined,
    instructions: null,
    timeoutSeconds: d.timeoutSeconds,
    thinking: d.thinking ?? null,
  });
  const list = config.agents.list;
  if (!list?.length) return { byId: new Map([[MAIN_AGENT, base(MAIN_AGENT)]]), defaultId: MAIN_AGENT, allowed: allowedOf(config) };
  const byId = new Map<string, Agent>();
  for (const a of list) {
    const b = base(a.id);
    byId.set(a.id, {
      id: a.id,
      model: a.model ?? b.model,
      models: a.models ? new Set(a.models) : b.models,
      instructions: a.instructions ?? null,
      timeoutSeconds: a.timeoutSeconds ?? b.timeoutSeconds,
      thinking: a.thinking ?? b.thinking,
    });
  }
  return { byId, defaultId: (list.find((a) => a.default) ?? list[0]!).id, allowed: allowedOf(config) };
}

function allowedOf(config: Config): ReadonlySet<string> | undefined {
  const ids = config.hooks.allowedAgentIds;
  return ids === undefined || ids.includes('*') ? undefined : new Set(ids);
}
