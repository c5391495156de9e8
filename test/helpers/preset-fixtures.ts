/**
 * A preset's `fixtures/` (docs/presets.md, "How a preset is made"): each file is a provider's
 * published example as `{source, payload}`, with `headers` the provider sends beside it when the
 * event type or delivery id travels there, and `assembled` saying how it was put together when the
 * provider publishes the parts but not the whole delivery.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Fixture {
  /** The file's name without `.json`: the event type, `.assembled` when it was put together. */
  name: string;
  /** Where the provider publishes it. */
  source: string;
  assembled?: string;
  headers?: Record<string, string>;
  payload: Record<string, unknown>;
}

/** Every fixture in `dir` (a URL, e.g. `new URL('fixtures/', import.meta.url)`), in name order. */
export function presetFixtures(dir: URL): Fixture[] {
  const path = fileURLToPath(dir);
  return readdirSync(path)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const fixture = JSON.parse(readFileSync(`${path}/${f}`, 'utf8')) as Omit<Fixture, 'name'>;
      if (typeof fixture.source !== 'string' || !fixture.payload) throw new Error(`${f}: a fixture needs "source" and "payload"`);
      return { name: f.slice(0, -'.json'.length), ...fixture };
    });
}
