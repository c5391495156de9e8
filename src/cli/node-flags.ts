/**
 * V8 flags `hook-intake serve` runs with (docs/performance.md, "Memory").
 *
 * Semi-spaces: Node's default young generation on a 64-bit machine lets
 * semi-spaces grow to 32 MiB each (96 MiB of new space in all); a server that
 * answers after a group commit keeps each request's objects alive for a
 * millisecond or two, and under load that new space fills to its maximum and
 * stays resident, in the main thread and in each transform worker. 8 MiB
 * semi-spaces keep peak resident memory under load 40 MiB lower in wake than
 * Node's default, 80 MiB with a TS transform (10–70 and 40 MiB lower than
 * 16 MiB), for about 6 % more CPU in wake at 50 connections and none
 * measurable at 200 or with a transform; 4 MiB saves another 5–10 MiB for
 * 5–10 % more CPU.
 *
 * Maglev: V8's mid-tier optimising compiler runs its compilations on
 * background threads, and the memory they take from the C allocator in those
 * threads stays resident once the load that made the code hot has passed:
 * about 15 MiB of peak resident memory in wake and with templates. Hot code
 * is still optimised by TurboFan, V8's top tier.
 *
 * Allocation-site pretenuring: V8 counts how many objects of each literal in
 * the code survive a young-generation collection and, past a threshold,
 * allocates that literal's objects in the old generation from then on. Under
 * load a request's objects (a write queued for the group commit, the arrays
 * of one request) are briefly alive in great numbers, and a decision to
 * pretenure one of them sticks for the life of the process: each such object,
 * dead once its request is answered, stays in the old generation until the
 * next full collection and keeps the young objects it points to alive, so
 * they are promoted too. At 200 connections that took peak resident memory
 * from about 130 MiB to about 200 MiB in about half the runs; with
 * pretenuring off, in none.
 */
export const SEMI_SPACE_FLAG = '--max-semi-space-size';
export const SEMI_SPACE_MB = 8;

/** Each flag `serve` adds, with the V8 flag names that count as the operator's own choice of it. */
const CHOSEN: readonly { flag: string; names: RegExp }[] = [
  { flag: `${SEMI_SPACE_FLAG}=${SEMI_SPACE_MB}`, names: /^--max-semi-space-size(=|$)/ },
  { flag: '--no-maglev', names: /^--(no-)?maglev(=|$)/ },
  { flag: '--no-allocation-site-pretenuring', names: /^--(no-)?allocation-site-pretenuring(=|$)/ },
];

/** A V8 flag as V8 reads it: `_` and `-` alike, `--no-x` and `--nox` alike. */
const spelling = (flag: string) => flag.replace(/_/g, '-').replace(/^--no(?!-)/, '--no-');

/**
 * The flags to add when the process should replace itself before serving:
 * none for commands other than `serve`; each flag only when the operator has
 * not already set it either way (on the command line, or in NODE_OPTIONS for
 * the semi-space size: Node refuses the other two there).
 */
export function serveFlags(args: readonly string[], execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  if (args[0] !== 'serve') return [];
  const given = [...execArgv, ...(nodeOptions ? nodeOptions.split(/\s+/) : [])].map(spelling);
  return CHOSEN.filter((f) => !given.some((g) => f.names.test(g))).map((f) => f.flag);
}

/**
 * The C allocator's setting `serve` runs with: glibc's threshold above which an allocation gets
 * pages of its own from the kernel (and gives them back when freed), held at glibc's own starting
 * value of 128 KiB.
 *
 * By default glibc raises that threshold each time such an allocation is freed, up to 32 MiB, and
 * the threshold for giving free memory at the top of its heaps back to the kernel with it. After
 * the first few large buffers have come and gone, every allocation below the new threshold comes
 * from the heaps, where freed memory stays resident. Under sustained agent load that kept
 * 8–18 MiB more resident after 30–36 s (docs/performance.md). Setting the
 * threshold, to any value, turns the raising off. Other C libraries ignore the variable.
 */
export const MALLOC_TUNABLE = 'glibc.malloc.mmap_threshold=131072';

/**
 * What `serve` adds to its environment when it replaces itself: `GLIBC_TUNABLES` with
 * `MALLOC_TUNABLE`, unless the operator has set either allocator threshold already (in
 * `GLIBC_TUNABLES` or through glibc's older `MALLOC_*_THRESHOLD_` variables). Undefined when
 * nothing is to be added, and for commands other than `serve`.
 */
export function serveEnv(args: readonly string[], env: NodeJS.ProcessEnv): { GLIBC_TUNABLES: string } | undefined {
  if (args[0] !== 'serve') return undefined;
  if (env.MALLOC_MMAP_THRESHOLD_ !== undefined || env.MALLOC_TRIM_THRESHOLD_ !== undefined) return undefined;
  const tunables = env.GLIBC_TUNABLES;
  if (!tunables) return { GLIBC_TUNABLES: MALLOC_TUNABLE };
  if (/(^|:)glibc\.malloc\.(mmap|trim)_threshold=/.test(tunables)) return undefined;
  return { GLIBC_TUNABLES: `${tunables}:${MALLOC_TUNABLE}` };
}

/** Set (to `1`) on the image `restartForCache` starts, so that it happens at most once. */
export const RESTARTED_ENV = 'HOOK_INTAKE_COMPILE_CACHE_RESTART';

/**
 * How `process.moduleLoadList` names Node's type-stripping compiler once it is loaded. Both are
 * Node's internals, read only here: Node offers no public way to tell whether a start compiled its
 * sources, and not keeping the compiler resident saves about 20 MB of a 100 MB idle server. The
 * compile-cache test checks the name against a real start, so a Node that renames it fails there.
 */
export const TYPE_STRIPPER = 'NativeModule internal/deps/amaro/dist/index';

/**
 * Whether `serve` should replace itself (same pid) once its modules are loaded: when the compile
 * cache is on but the sources were compiled rather than found in it (the type-stripping compiler
 * is loaded), so that the image that serves finds them all compiled and never loads the compiler
 * (about 20 MB resident; docs/performance.md). At most once per start (`restarted`), and not
 * where a process cannot replace itself.
 */
export function restartForCache(s: {
  args: readonly string[];
  caching: boolean;
  restarted: boolean;
  loaded: readonly string[] | undefined;
  canReplace: boolean;
}): boolean {
  return s.args[0] === 'serve' && s.caching && !s.restarted && s.canReplace && (s.loaded?.includes(TYPE_STRIPPER) ?? false);
}
