// A transform worker's entry point: it turns on Node's compile cache (each thread has its own; see
// src/cli/start.js) before the worker's modules are imported.
import { enableCompileCache } from 'node:module';

enableCompileCache?.();
await import('./worker.ts');
