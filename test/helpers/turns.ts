/**
 * `fn`'s result and how many turns of the event loop other work had while it
 * ran: a read that yields between pieces lets many turns pass, one that blocks
 * lets none.
 */
export async function turnsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let spinning = true;
  const spin = () => {
    if (!spinning) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  try {
    return { result: await fn(), turns };
  } finally {
    spinning = false;
  }
}
