/**
 * Kept requests on Redis (SPEC §12): written by accept's script (lua/console.ts, which has the key
 * layout), read back here. The body travels and is stored as bytes, never as text, so a body that is
 * not UTF-8 comes back as it was.
 */
import type { Redis } from 'ioredis';
import type { KeptRequest, RequestListOptions } from '../types.ts';
import type { Arg } from './scripts.ts';

/** What accept's script takes after its own arguments when the batch keeps its request. */
export function keptRequestArgs(r: KeptRequest): (Arg | Buffer)[] {
  const { body, ...rest } = r;
  return [r.id, r.hook, r.status, r.receivedAt, JSON.stringify(rest), Buffer.from(body.buffer, body.byteOffset, body.byteLength)];
}

export class RedisRequests {
  private readonly client: Redis;
  private readonly p: string;

  constructor(client: Redis, prefix: string) {
    this.client = client;
    this.p = prefix;
  }

  async get(id: string): Promise<KeptRequest | undefined> {
    const [j, b] = await this.client.hmgetBuffer(`${this.p}rq:${id}`, 'j', 'b');
    return j && b ? toRequest(j, b) : undefined;
  }

  /** Newest first, from the index that fits the filters given. */
  async list(opts: RequestListOptions): Promise<KeptRequest[]> {
    let max = '+inf';
    if (opts.before !== undefined) {
      const seq = await this.client.hget(`${this.p}rq:${opts.before}`, 'seq');
      if (seq === null) return [];
      max = `(${seq}`;
    }
    const { hook, status } = opts;
    const index =
      hook !== undefined && status !== undefined ? `reqs:hs:${status}:${hook}` : hook !== undefined ? `reqs:h:${hook}` : status !== undefined ? `reqs:s:${status}` : 'reqs';
    const ids = await this.client.zrevrangebyscore(`${this.p}${index}`, max, '-inf', 'LIMIT', 0, opts.limit);
    if (ids.length === 0) return [];
    const pipe = this.client.pipeline();
    for (const id of ids) pipe.hmgetBuffer(`${this.p}rq:${id}`, 'j', 'b');
    const out: KeptRequest[] = [];
    for (const [err, fields] of (await pipe.exec())!) {
      if (err) throw err;
      const [j, b] = fields as (Buffer | null)[];
      // pruned since the index was read
      if (j && b) out.push(toRequest(j, b));
    }
    return out;
  }
}

function toRequest(j: Buffer, b: Buffer): KeptRequest {
  return { ...(JSON.parse(j.toString('utf8')) as Omit<KeptRequest, 'body'>), body: new Uint8Array(b) };
}
