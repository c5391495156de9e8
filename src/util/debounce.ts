/**
 * Gathers a burst of noted paths into one call: `onChange` runs `debounceMs` after the last note of
 * a burst, with every path noted in it; `onBurst` runs at the first note of each burst. The timers
 * are a parameter so a test can run them by hand (docs/development.md, "Time").
 */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The global timers, looked up at each call (so a test's fake timers apply). */
export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface PathDebounce {
  note(path: string): void;
  /** Drops the burst being gathered; nothing is called after it. */
  cancel(): void;
}

export function debouncePaths(
  onChange: (paths: string[]) => void,
  debounceMs: number,
  onBurst?: () => void,
  timers: Timers = realTimers,
): PathDebounce {
  let timer: unknown;
  let changed = new Set<string>();
  let cancelled = false;
  const fire = () => {
    timer = undefined;
    const paths = [...changed];
    changed = new Set();
    if (!cancelled) onChange(paths);
  };
  return {
    note(path) {
      if (cancelled) return;
      changed.add(path);
      if (timer !== undefined) timers.clearTimeout(timer);
      else onBurst?.();
      timer = timers.setTimeout(fire, debounceMs);
    },
    cancel() {
      cancelled = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
    },
  };
}
