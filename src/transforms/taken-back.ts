/**
 * Indexes of the BigInt64Array a transform worker shares with its pool (64-bit: ids only grow
 * for as long as a pool lives). When the pool takes back the calls sent ahead behind a slow one,
 * it writes the first one's id to `FROM`, then the last one's to `THROUGH`; the worker reads
 * `THROUGH`, then `FROM`, before each call and skips it when its id is in between. So the slow
 * call itself is never skipped, even when its worker has not started it yet, and a range read
 * while the pool replaces it is never wider than either. A worker that reads the range just
 * before the pool writes it may run a call taken back (its answer is ignored); it never skips a
 * call it still owes.
 */
export const TakenBack = { FROM: 0, THROUGH: 1, length: 2 } as const;
