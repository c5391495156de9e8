/**
 * GenerationRef: requests hold the generation they started on; a swap installs
 * the next one for new requests and disposes the old one only once nothing
 * holds it (a disposed generation stops its plugin instances).
 */
import { describe, expect, it } from 'vitest';
import type { Plugin } from '../../src/plugins/define.ts';
import { GenerationRef } from '../../src/generation/ref.ts';
import type { Generation } from '../../src/generation/types.ts';
import { testGeneration } from '../helpers/runtime.ts';

/** A generation whose one channel counts its stops: disposing the generation stops it once. */
function counted(): { gen: Generation; stops: () => number } {
  let stops = 0;
  const plugin: Plugin = {
    name: 'stop-counter',
    channels: { counter: { create: () => ({ send: async () => {}, stop: () => void stops++ }) } },
  };
  const gen = testGeneration({ channels: { c: { type: 'counter' } } }, { plugins: [plugin] });
  return { gen, stops: () => stops };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('GenerationRef', () => {
  it('disposes the old generation at once when a swap finds nothing holding it', async () => {
    const a = counted();
    const b = counted();
    const ref = new GenerationRef(a.gen);
    ref.release(ref.acquire());
    expect(ref.swap(b.gen)).toBe(a.gen);
    await settle();
    expect(ref.current).toBe(b.gen);
    expect(a.stops()).toBe(1);
    expect(b.stops()).toBe(0);
  });

  it('keeps a held generation until its last holder releases it, and hands new requests the next one', async () => {
    const a = counted();
    const b = counted();
    const ref = new GenerationRef(a.gen);
    const first = ref.acquire();
    const second = ref.acquire();
    ref.swap(b.gen);
    expect(ref.acquire()).toBe(b.gen);
    ref.release(first);
    await settle();
    expect(a.stops()).toBe(0);
    ref.release(second);
    await settle();
    expect(a.stops()).toBe(1);
  });

  it('holds the generation for the whole of use(), also when it throws', async () => {
    const a = counted();
    const ref = new GenerationRef(a.gen);
    let swapped!: Promise<unknown>;
    await expect(
      ref.use(async (g) => {
        expect(g).toBe(a.gen);
        ref.swap(counted().gen);
        swapped = settle();
        await swapped;
        expect(a.stops()).toBe(0);
        throw new Error('the request failed');
      }),
    ).rejects.toThrow('the request failed');
    await settle();
    expect(a.stops()).toBe(1);
  });

  it('never disposes the current generation when its requests come and go', async () => {
    const a = counted();
    const ref = new GenerationRef(a.gen);
    for (let i = 0; i < 3; i++) ref.release(ref.acquire());
    await settle();
    expect(a.stops()).toBe(0);
  });

  it('clears the last reload error on a swap, and disposes the current and retired generations at shutdown', async () => {
    const a = counted();
    const b = counted();
    const ref = new GenerationRef(a.gen);
    ref.lastReloadError = { at: 1, issues: [] };
    ref.acquire();
    ref.swap(b.gen);
    expect(ref.lastReloadError).toBeUndefined();
    await ref.disposeAll();
    expect(a.stops()).toBe(1);
    expect(b.stops()).toBe(1);
  });
});
