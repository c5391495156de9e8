/**
 * An enabled preset as the mappings it contributes (docs/presets.md). A preset of mappings is taken as
 * it is; a source preset becomes one mapping built from its entry in `hooks.presets`: its signature
 * scheme with the entry's secret, its path, the event types it takes, the action and where the reply
 * goes. An option the preset does not take, an event type it does not know, and a missing secret (or
 * public key, for a scheme that checks one) are issues naming the option.
 */
import type { MappingConfig, PresetEntryConfig } from '../config/schema.ts';
import type { PresetDefinition } from '../plugins/define.ts';
import { didYouMean } from '../util/did-you-mean.ts';

/** How much hook content a source preset puts inside the boundary unless `maxChars` says otherwise. */
export const DEFAULT_MAX_CHARS = 4000;

/** The options every source preset takes (a preset adds its scheme's own: `verifyOptions`). */
export const COMMON_OPTIONS = ['name', 'secret', 'secrets', 'path', 'events', 'action', 'channel', 'to', 'model', 'sessionKey', 'maxChars'];

export interface PresetIssue {
  /** The key under the entry (`secret`, `events[1]`), or '' for the entry itself. */
  path: string;
  message: string;
}

/** `hooks.presets[i]` as an entry: a bare name is the preset with its defaults. */
export function presetEntry(raw: string | PresetEntryConfig): PresetEntryConfig {
  return typeof raw === 'string' ? { name: raw } : raw;
}

/** The mappings the preset adds for `entry`, or the issues that stop it. */
export function presetMappings(def: PresetDefinition, entry: PresetEntryConfig): { mappings: MappingConfig[]; issues: PresetIssue[] } {
  if (def.mappings) return mappingsPreset(def.mappings, entry);
  const issues = optionIssues(def, entry);
  if (issues.length) return { mappings: [], issues };
  return { mappings: [sourceMapping(def, entry)], issues };
}

/** A preset of mappings (`gmail`) takes no options: its settings live in its own config section. */
function mappingsPreset(mappings: MappingConfig[], entry: PresetEntryConfig): { mappings: MappingConfig[]; issues: PresetIssue[] } {
  const extra = Object.keys(entry).filter((k) => k !== 'name');
  if (extra.length)
    return {
      mappings: [],
      issues: [{ path: extra[0]!, message: `the "${entry.name}" preset takes no options (its settings have a section of their own)` }],
    };
  return { mappings, issues: [] };
}

function optionIssues(def: PresetDefinition, entry: PresetEntryConfig): PresetIssue[] {
  const issues: PresetIssue[] = [];
  const known = [...COMMON_OPTIONS, ...(def.verifyOptions ?? [])];
  for (const key of Object.keys(entry)) {
    if (known.includes(key)) continue;
    const hint = didYouMean(key, known);
    issues.push({ path: key, message: `is not an option of the "${entry.name}" preset${hint ? ` (did you mean "${hint}"?)` : ''}` });
  }
  const hasSecret = entry.secret !== undefined || entry.secrets !== undefined;
  if (def.verify && publicKeyed(def)) {
    // the provider signs with its private key: the entry names the public key it shows, and no secret
    if (entry.publicKey === undefined)
      issues.push({
        path: 'publicKey',
        message: `is required: the "${entry.name}" preset checks the provider's signature (${def.verify})`,
      });
    if (hasSecret)
      issues.push({
        path: entry.secret !== undefined ? 'secret' : 'secrets',
        message: `the "${entry.name}" preset checks a signature with \`publicKey\`, not a secret`,
      });
  } else if (def.verify && !hasSecret)
    issues.push({ path: 'secret', message: `is required: the "${entry.name}" preset checks the provider's signature (${def.verify})` });
  if (!def.verify && hasSecret)
    issues.push({ path: 'secret', message: `the "${entry.name}" preset has no signature to check: the hook token is its credential` });
  if (entry.secret !== undefined && entry.secrets !== undefined)
    issues.push({ path: 'secrets', message: 'give `secret` or `secrets`, not both' });
  if (entry.events && !def.event)
    issues.push({
      path: 'events',
      message: `the "${entry.name}" preset names no event type per request (one delivery holds several): choose the events on the provider's side`,
    });
  for (const [i, event] of (def.event ? (entry.events ?? []) : []).entries()) {
    if (!def.events || def.events.includes(event)) continue;
    const hint = didYouMean(event, def.events);
    issues.push({
      path: `events[${i}]`,
      message: `"${event}" is not an event type of the "${entry.name}" preset${hint ? ` (did you mean "${hint}"?)` : ''}`,
    });
  }
  return issues;
}

/** True for a scheme checked with the provider's public key (SendGrid's ECDSA), which takes no secret. */
const publicKeyed = (def: PresetDefinition): boolean => def.verifyOptions?.includes('publicKey') === true;

/** The option that holds a preset's credential: `secret`, `publicKey` for a public-key scheme, none when the hook token is it. */
export function credentialOption(def: PresetDefinition): 'secret' | 'publicKey' | undefined {
  if (!def.verify) return undefined;
  return publicKeyed(def) ? 'publicKey' : 'secret';
}

/** The one mapping of a source preset, as the entry's options set it. */
function sourceMapping(def: PresetDefinition, entry: PresetEntryConfig): MappingConfig {
  const path = entry.path?.replace(/^\/+|\/+$/g, '') || entry.name;
  const m: MappingConfig = {
    id: path,
    match: { path },
    action: entry.action ?? def.action ?? 'agent',
    name: def.name ?? entry.name,
    label: def.label ?? def.name ?? entry.name,
    transform: { module: def.transform! },
    maxChars: entry.maxChars ?? DEFAULT_MAX_CHARS,
  };
  if (def.verify) {
    const verify: Record<string, unknown> = publicKeyed(def)
      ? { type: def.verify }
      : { type: def.verify, secret: entry.secrets ?? entry.secret };
    for (const o of def.verifyOptions ?? []) {
      const v = entry[o];
      if (v !== undefined) verify[o] = v;
    }
    m.verify = verify as MappingConfig['verify'];
  }
  if (def.event) m.event = def.event;
  if (entry.events) m.events = entry.events;
  if (def.idempotencyKey) m.idempotencyKey = def.idempotencyKey;
  for (const k of ['channel', 'to', 'model', 'sessionKey'] as const) if (entry[k] !== undefined) m[k] = entry[k];
  return m;
}
