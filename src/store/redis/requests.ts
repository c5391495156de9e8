/**
 * Kept hook requests on Redis (the request log, docs/http.md, "Kept requests"): a hash each (`req:<id>`: the request as JSON
 * without its body, the body as bytes), listed through sorted sets by acceptance order: all of them
 * (`reqs`), by hook (`reqs:hook:<hook>`) and by status (`reqs:status:<status>`). Written by the accept
 * script with the request's events and runs; never updated after.
 */
import type { Redis } from 'ioredis';
import type { KeptRequests } from '../roles.ts';
import type { KeptRequest, KeptRequestSummary, NewKeptRequest, RequestListOptions } from '../types.ts';
import type { Arg } from './scripts.ts';

/** The accept script's arguments for a kept request named `id` (lua/records/accept.lua). */
export function requestArgs(id: string, r: NewKeptRequest): Arg[] {
  const { body, ...rest } = r;
  return [id, r.hook, r.status, r.receivedAt, JSON.stringify({ id, ...rest }), Buffer.from(body.buffer, body.byteOffset, body.byteLength)];
}

async function getRequest(client: Redis, p: string, id: string): Promise<KeptRequest | undefined> {
  const h = await client.hgetallBuffer(`${p}req:${id}`);
  if (!h.j || !h.body) return undefined;
  const r = JSON.parse(h.j.toString('utf8')) as Omit<KeptRequest, 'body' | 'bodyBytes'> & { bodyBytes?: number };
  return { ...r, reason: r.reason ?? null, bodyBytes: r.bodyBytes ?? h.body.byteLength, body: h.body };
}

/** A kept request without its headers and body: the body's length is read, not the body. */
async function getSummary(client: Redis, p: string, id: string): Promise<KeptRequestSummary | undefined> {
  const [j, bodyBytes] = await Promise.all([client.hget(`${p}req:${id}`, 'j'), client.hstrlen(`${p}req:${id}`, 'body')]);
  if (j === null) return undefined;
  // a body that was not kept (a refused request's) has its size as received in the JSON
  const {
    headers: _headers,
    bodyBytes: received,
    ...rest
  } = JSON.parse(j) as Omit<KeptRequest, 'body' | 'bodyBytes'> & { bodyBytes?: number };
  return { ...rest, reason: rest.reason ?? null, bodyBytes: received ?? bodyBytes };
}

/** Newest first, through the narrowest index the filters allow, the other filter applied here. */
async function listRequests(client: Redis, p: string, opts: RequestListOptions): Promise<KeptRequestSummary[]> {
  let top = '+inf';
  if (opts.before !== undefined) {
    const seq = await client.hget(`${p}req:${opts.before}`, 'seq');
    if (seq === null) return [];
    top = `(${seq}`;
  }
  const index =
    opts.hook !== undefined ? `${p}reqs:hook:${opts.hook}` : opts.status !== undefined ? `${p}reqs:status:${opts.status}` : `${p}reqs`;
  const out: KeptRequestSummary[] = [];
  const page = Math.max(opts.limit, 100);
  for (let offset = 0; out.length < opts.limit; offset += page) {
    const ids = await client.zrevrangebyscore(index, top, '-inf', 'LIMIT', offset, page);
    for (const r of await Promise.all(ids.map((id) => getSummary(client, p, id)))) {
      if (!r || (opts.status !== undefined && r.status !== opts.status)) continue;
      out.push(r);
      if (out.length >= opts.limit) break;
    }
    if (ids.length < page) break;
  }
  return out;
}

/** The request log (`KeptRequests`) on Redis. */
export class RedisKeptRequests implements KeptRequests {
  private readonly client: Redis;
  private readonly p: string;

  constructor(client: Redis, prefix: string) {
    this.client = client;
    this.p = prefix;
  }

  get(id: string): Promise<KeptRequest | undefined> {
    return getRequest(this.client, this.p, id);
  }

  list(opts: RequestListOptions): Promise<KeptRequestSummary[]> {
    return listRequests(this.client, this.p, opts);
  }
}
