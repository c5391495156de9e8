/**
 * The dry run of retention on Redis (`RetentionRecords.countPrunable`): the sets the prune script takes from
 * (lua/retention/prune.lua) hold only what may go, so four of the five counts are a `ZCOUNT` below the cutoff.
 * Transcripts are counted line by line over the idle sessions, a slice of sessions per round trip, so
 * that the count never holds the server, however many there are (a script reading them all would
 * stop every instance for as long).
 */
import type { Redis } from 'ioredis';
import type { PruneBefore, PruneCounts } from '../types.ts';

/** Sessions read per round trip. */
const SLICE = 500;

export async function countPrunable(client: Redis, p: string, before: PruneBefore): Promise<PruneCounts> {
  const below = (set: string, cut: number) => client.zcount(`${p}${set}`, '-inf', `(${cut}`);
  const [runs, events, messages, deliveries, requests] = await Promise.all([
    below('runs:done', before.runs),
    below('events:consumedAt', before.events),
    Promise.all([idleLines(client, p, before.runs), inUseLines(client, p, before.runs, before.sessionLines)]).then(([a, b]) => a + b),
    below('outbox:done', before.runs),
    below('reqs:at', before.requests),
  ]);
  return { runs, events, messages, deliveries, requests };
}

/** The transcript lines of the sessions idle since before `cut`. */
async function idleLines(client: Redis, p: string, cut: number): Promise<number> {
  let total = 0;
  for (let from = 0; ; from += SLICE) {
    const keys = await client.zrangebyscore(`${p}sessions`, '-inf', `(${cut}`, 'LIMIT', from, SLICE);
    if (keys.length > 0) {
      const pipe = client.pipeline();
      for (const key of keys) pipe.llen(`${p}m:${key}`);
      for (const [err, n] of (await pipe.exec())!) {
        if (err) throw err;
        total += Number(n);
      }
    }
    if (keys.length < SLICE) return total;
  }
}

/** Of the sessions in use at `cut`, the lines from before it beyond each one's newest `keep`. */
async function inUseLines(client: Redis, p: string, cut: number, keep: number): Promise<number> {
  let total = 0;
  for (let from = 0; ; from += SLICE) {
    const keys = await client.zrangebyscore(`${p}sessions`, cut, '+inf', 'LIMIT', from, SLICE);
    for (const key of keys) {
      const extra = (await client.llen(`${p}m:${key}`)) - keep;
      if (extra <= 0) continue;
      for (const line of await client.lrange(`${p}m:${key}`, 0, extra - 1)) {
        // createdAt is the last key of a line's JSON (codec.ts messageJson)
        const at = Number(/"createdAt":(-?[\d.eE+]+)}$/.exec(line)?.[1]);
        if (!(at < cut)) break;
        total++;
      }
    }
    if (keys.length < SLICE) return total;
  }
}
