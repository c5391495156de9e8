import { defineConfig } from 'vitest/config';

export default defineConfig({
  // the package's own name (`hook-intake/plugin`, as the built-in plugins import it) resolves to
  // the TypeScript sources under test, not to the compiled dist/ the CLI runs (package.json
  // "exports"); the rest are Vite's own conditions for Node
  ssr: { resolve: { conditions: ['hook-intake-source', 'module', 'node', 'development|production'] } },
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
