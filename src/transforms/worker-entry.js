// A transform worker's entry point. Plain JavaScript, so that it can turn on Node's compile cache
// (each thread has its own; see src/cli/start.js) before the TypeScript worker is loaded: a worker
// whose modules are all in the cache never loads the type-stripping compiler (docs/performance.md).
import { enableCompileCache } from 'node:module';

enableCompileCache?.();
await import('./worker.ts');
