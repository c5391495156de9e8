import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'plugins/**/*.test.ts', 'presets/**/*.test.ts', 'transforms/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // end-to-end files start real servers; two workers match the machine's two cores
    maxWorkers: 2,
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
