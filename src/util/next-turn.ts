/**
 * Coalesces calls into one run of `fn` on the next turn of the event loop
 * (`setImmediate`): however often the returned function is called during a
 * turn, `fn` runs once, after the I/O of that turn.
 */
export function onNextTurn(fn: () => void): () => void {
  let scheduled = false;
  const run = () => {
    scheduled = false;
    fn();
  };
  return () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(run);
  };
}
