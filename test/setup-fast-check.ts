/**
 * Property tests explore new random inputs on every local run, where a failure is something to
 * fix. In CI (`CI` set) they replay a fixed seed, so whether a change lands never depends on
 * which inputs a run happened to draw; `FC_SEED=<n>` replays a reported counterexample's seed.
 */
import fc from 'fast-check';

const seed = process.env.FC_SEED ?? (process.env.CI ? '20261125' : undefined);
if (seed !== undefined) fc.configureGlobal({ seed: Number(seed) });
