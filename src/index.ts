/**
 * The public API, imported by package name (`import { definePlugin } from 'hook-intake'`):
 * everything a plugin or a transform author needs. The same names come in two smaller parts:
 * `hook-intake/plugin` (plugins/define.ts) and `hook-intake/transform` (transforms/types.ts, types
 * only). See docs/development.md ("Adding a plugin") and docs/transforms.md.
 */
export * from './plugins/define.ts';
export type * from './transforms/types.ts';
