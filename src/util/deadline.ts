/**
 * Stopping with a deadline: wait for what is in flight, but not longer than the shutdown allows.
 * The runner, outbox, heartbeat and service all stop this way.
 */

/**
 * Resolves true once `work` settles (fulfilled or rejected) within `ms`, false when `ms` pass first.
 * The timer is cleared either way, so a quick stop leaves nothing behind.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
  const done = work.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits for `work` up to `ms`; when it is still running then, calls `abort` (which makes it end soon)
 * and waits for it to settle. Resolves true when it finished within `ms`. A rejection of `work` is
 * not rethrown: the work logs its own failures.
 */
export async function stopWithin(work: Promise<unknown>, ms: number, abort: () => void): Promise<boolean> {
  if (await settlesWithin(work, ms)) return true;
  abort();
  await work.catch(() => {});
  return false;
}
