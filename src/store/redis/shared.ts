/**
 * The counters and console sessions on Redis (`Counters`, `Sessions`): the service's, shared by every
 * instance on the server. A counter's window is a hash (`c:<key>`) that expires with it
 * (lua/counters/countInWindow.lua); a session a string with a time to live (`console:<key>`).
 */
import type { Redis } from 'ioredis';
import type { Counters, Sessions } from '../roles.ts';
import type { RunScript } from './scripts.ts';

export class RedisCounters implements Counters {
  private readonly client: Redis;
  private readonly run: RunScript;
  private readonly p: string;

  constructor(client: Redis, run: RunScript, prefix: string) {
    this.client = client;
    this.run = run;
    this.p = prefix;
  }

  async countInWindow(key: string, windowMs: number, now: number): Promise<{ count: number; start: number }> {
    const [count, start] = (await this.run('countInWindow', [this.p, key, now, windowMs])) as [number, string];
    return { count: Number(count), start: Number(start) };
  }

  async resetCount(key: string): Promise<void> {
    await this.client.del(`${this.p}c:${key}`);
  }
}

export class RedisSessions implements Sessions {
  private readonly client: Redis;
  private readonly p: string;

  constructor(client: Redis, prefix: string) {
    this.client = client;
    this.p = prefix;
  }

  async put(key: string, value: string, ttlMs: number, onlyIfKept: boolean): Promise<void> {
    if (onlyIfKept) await this.client.set(`${this.p}console:${key}`, value, 'PX', Math.ceil(ttlMs), 'XX');
    else await this.client.set(`${this.p}console:${key}`, value, 'PX', Math.ceil(ttlMs));
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.client.get(`${this.p}console:${key}`)) ?? undefined;
  }

  async delete(key: string): Promise<void> {
    await this.client.del(`${this.p}console:${key}`);
  }
}
