/**
 * The public API, imported by package name (`import { definePlugin } from 'hook-intake'`):
 * everything a plugin or a transform author needs. The same names come in two smaller parts:
 * `hook-intake/plugin` (plugin-api/index.ts) and `hook-intake/transform` (transforms/types.ts, types
 * only). See docs/plugins.md and docs/transforms.md.
 */
export * from './plugin-api/index.ts';
export type * from './transforms/types.ts';
