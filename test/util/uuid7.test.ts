import { describe, expect, it } from 'vitest';
import { uuidv7 } from '../../src/util/uuid7.ts';

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidv7()', () => {
  it('has the UUIDv7 layout: version 7, RFC 9562 variant', () => {
    for (let i = 0; i < 100; i++) expect(uuidv7()).toMatch(UUID7);
  });

  it('starts with the millisecond timestamp, so ids sort by creation time', () => {
    const t = Date.UTC(2025, 10, 20, 10, 0, 0);
    const id = uuidv7(t);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(t);
    const later = [uuidv7(t + 1), uuidv7(t + 1000), uuidv7(t + 86_400_000)];
    expect([...later, id].sort()).toEqual([id, ...later]);
  });

  it('takes the timestamp of each call, whichever came before', () => {
    const t = Date.UTC(2025, 10, 20, 10, 0, 0);
    for (const at of [t, t, t + 1, t - 5000, t - 5000, t + 0.9, 0, 2 ** 48 - 1]) {
      const id = uuidv7(at);
      expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(Math.floor(at));
      expect(id).toMatch(UUID7);
    }
  });

  it('differs between ids of the same millisecond', () => {
    const t = Date.now();
    const ids = new Set(Array.from({ length: 1000 }, () => uuidv7(t)));
    expect(ids.size).toBe(1000);
  });
});

describe('uuidv7() order within a millisecond', () => {
  it('sorts ids of one millisecond in the order they were made', () => {
    const t = Date.UTC(2025, 10, 20, 10, 0, 1);
    const ids = Array.from({ length: 2048 }, () => uuidv7(t));
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(UUID7);
  });

  it('stays unique past the counter, and starts a new millisecond at a fresh counter', () => {
    const t = Date.UTC(2025, 10, 20, 10, 0, 2);
    const ids = Array.from({ length: 10_000 }, () => uuidv7(t));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(UUID7);
    const next = uuidv7(t + 1);
    expect(next > ids[ids.length - 1]!).toBe(true);
  });
});
