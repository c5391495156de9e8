/**
 * Word of runs that ended on Redis (`RunEnds`): the scripts that finish a run or end its delivery
 * (finishRun.lua, recordDelivery.lua) publish the run's id on the channel `<prefix>ends` in the same
 * atomic step, whichever instance runs them. An instance subscribes, on its own connection, only once
 * something listens; a publish with no subscriber costs the server next to nothing. Pub/sub does not
 * keep what was published while a connection was lost: after the subscriber connects again the
 * listeners are told that anything may have ended (undefined).
 */
import type { Redis } from 'ioredis';
import type { RunEnds } from '../roles.ts';

type Listener = (runId: string | undefined) => void;

export class RedisRunEnds implements RunEnds {
  private readonly client: Redis;
  private readonly channel: string;
  private readonly listeners = new Set<Listener>();
  private sub: Redis | undefined;
  private subscribed: Promise<void> | undefined;

  constructor(client: Redis, prefix: string) {
    this.client = client;
    this.channel = `${prefix}ends`;
  }

  async listen(fn: Listener): Promise<() => void> {
    this.listeners.add(fn);
    try {
      await (this.subscribed ??= this.subscribe());
    } catch (err) {
      this.listeners.delete(fn);
      this.subscribed = undefined;
      this.sub?.disconnect();
      this.sub = undefined;
      throw err;
    }
    return () => void this.listeners.delete(fn);
  }

  private tell(runId: string | undefined): void {
    for (const fn of this.listeners) fn(runId);
  }

  private async subscribe(): Promise<void> {
    // a connection in subscriber mode takes no other command: one of its own, with the client's settings
    const sub = (this.sub = this.client.duplicate());
    sub.on('error', () => {});
    sub.on('message', (_channel: string, runId: string) => this.tell(runId));
    let connected = false;
    sub.on('ready', () => {
      if (!connected) return void (connected = true);
      // connected again: subscribed again (the client does it too; one more is harmless), then what was missed is read again
      sub.subscribe(this.channel).then(
        () => this.tell(undefined),
        () => {},
      );
    });
    await sub.subscribe(this.channel);
  }

  close(): void {
    this.sub?.disconnect();
    this.sub = undefined;
  }
}
