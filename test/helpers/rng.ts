/** A deterministic pseudo-random generator for property tests, so a failure can be replayed from its seed. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}
