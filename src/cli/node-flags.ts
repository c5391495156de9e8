/**
 * V8 flags `hook-intake serve` runs with. Node's default young generation on
 * a 64-bit machine lets semi-spaces grow to 32 MiB each (96 MiB of new space
 * in all); a server that answers after a group commit keeps each request's
 * objects alive for a millisecond or two, and under load that new space
 * fills to its maximum and stays resident, in the main thread and in each
 * transform worker. 8 MiB semi-spaces keep peak resident memory under load
 * 40 MiB lower in wake than Node's default, 80 MiB with a TS transform (10–70
 * and 40 MiB lower than 16 MiB), for about 6 % more CPU in wake at 50
 * connections and none measurable at 200 or with a transform; 4 MiB saves
 * another 5–10 MiB for 5–10 % more CPU (docs/performance.md, "Memory").
 */
export const SEMI_SPACE_FLAG = '--max-semi-space-size';
export const SEMI_SPACE_MB = 8;

/**
 * The flags to add when the process should replace itself before serving:
 * none for commands other than `serve`, and none when the operator already
 * set a semi-space size (on the command line or in NODE_OPTIONS).
 */
export function serveFlags(args: readonly string[], execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  if (args[0] !== 'serve') return [];
  const chosen = (s: string) => s.startsWith(SEMI_SPACE_FLAG) || s.startsWith(SEMI_SPACE_FLAG.replace(/-/g, '_').replace(/^__/, '--'));
  if (execArgv.some(chosen)) return [];
  if (nodeOptions && nodeOptions.split(/\s+/).some(chosen)) return [];
  return [`${SEMI_SPACE_FLAG}=${SEMI_SPACE_MB}`];
}

/** Set (to `1`) on the image `restartForCache` starts, so that it happens at most once. */
export const RESTARTED_ENV = 'HOOK_INTAKE_COMPILE_CACHE_RESTART';

/** How `process.moduleLoadList` names Node's type-stripping compiler once it is loaded. */
export const TYPE_STRIPPER = 'NativeModule internal/deps/amaro/dist/index';

/**
 * Whether `serve` should replace itself (same pid) once its modules are loaded: when the compile
 * cache is on but the sources were compiled rather than found in it (the type-stripping compiler
 * is loaded), so that the image that serves finds them all compiled and never loads the compiler
 * (about 20 MB resident; docs/performance.md). At most once per start (`restarted`), and not
 * where a process cannot replace itself.
 */
export function restartForCache(s: { args: readonly string[]; caching: boolean; restarted: boolean; loaded: readonly string[] | undefined; canReplace: boolean }): boolean {
  return s.args[0] === 'serve' && s.caching && !s.restarted && s.canReplace && (s.loaded?.includes(TYPE_STRIPPER) ?? false);
}
