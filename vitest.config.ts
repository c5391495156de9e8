import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'plugins/**/*.test.ts', 'presets/**/*.test.ts', 'transforms/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Three workers on the two cores: a good part of the suite waits on timers, child processes and
    // sockets (measured: two workers kept about 1.45 cores busy, 97-104 s; three 77-80 s idle and
    // 98 s beside a CPU-bound process, every test passing)
    maxWorkers: 3,
    // files share their workers: starting one per file cost about a fifth of the suite's time;
    // no test mocks modules, and each file restores the timers and environment it changes
    isolate: false,
    reporters: ['default'],
    // the run's own temporary directory (test/global-setup.ts)
    globalSetup: ['test/global-setup.ts'],
    // property tests replay a fixed seed in CI (test/setup-fast-check.ts)
    setupFiles: ['test/setup-fast-check.ts'],
  },
});
