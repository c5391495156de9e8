/**
 * The lists the read API shows (runs, a session's messages, events), newest first, read in pieces
 * (pages.ts) so that a long list or a filter most rows fail does not hold the event loop; a failure
 * of the disk is the contract's error (errors.ts).
 */
import type { EventStatus, ListOptions, Run, RunListOptions, SessionMessage, SystemEvent } from '../types.ts';
import { contractError } from './errors.ts';
import type { Meta } from './meta.ts';
import { LIST_WINDOW, newestFirst, stillOpen, type NewestFirst } from './pages.ts';
import { toEvent, toMessage, toRun } from './rows.ts';
import type { Statements } from './statements.ts';

export class Lists {
  private readonly q: Statements;
  private readonly meta: Meta;
  private readonly closed: () => boolean;

  constructor(q: Statements, meta: Meta, closed: () => boolean) {
    this.q = q;
    this.meta = meta;
    this.closed = closed;
  }

  /** One past the highest key of `table`'s rows (`end*` statements). */
  private end(stmt: 'endEvents' | 'endRuns' | 'endMessages'): number {
    return Number((this.q[stmt].get() as { n: number }).n);
  }

  /** A list read in pieces (pages.ts), stopped if the store closes meanwhile. */
  private newestFirst<T>(l: Omit<NewestFirst<T>, 'open'>): Promise<T[]> {
    return newestFirst({
      ...l,
      open: () => stillOpen(this.closed),
    });
  }

  async runs(opts: RunListOptions): Promise<Run[]> {
    try {
      if (opts.hook !== undefined || opts.session !== undefined) {
        const status = opts.status ?? null;
        const hook = opts.hook ?? null;
        const session = opts.session ?? null;
        return await this.newestFirst({
          stmt: this.q.listRunsFiltered,
          args: [status, status, hook, hook, session, session],
          key: 'seq',
          floor: 0,
          end: this.end('endRuns'),
          window: LIST_WINDOW,
          limit: opts.limit,
          map: toRun,
        });
      }
      const unfinished = opts.status === 'queued' || opts.status === 'running';
      const stmt = !opts.status ? this.q.listRuns : unfinished ? this.q.listUnfinishedByStatus : this.q.listRunsByStatus;
      return await this.newestFirst({
        stmt,
        args: opts.status ? [opts.status] : [],
        key: 'seq',
        floor: 0,
        end: this.end('endRuns'),
        // the index of unfinished runs holds only the rows that pass
        window: unfinished ? Infinity : LIST_WINDOW,
        limit: opts.limit,
        map: toRun,
      });
    } catch (err) {
      throw contractError(err);
    }
  }

  async messages(sessionKey: string, opts: ListOptions): Promise<SessionMessage[]> {
    try {
      // the session's rows through its index, whatever the other sessions hold
      return await this.newestFirst({
        stmt: this.q.listMessages,
        args: [sessionKey],
        key: 'id',
        floor: 0,
        end: this.end('endMessages'),
        window: Infinity,
        limit: opts.limit,
        map: toMessage,
      });
    } catch (err) {
      throw contractError(err);
    }
  }

  async events(opts: ListOptions & { status?: EventStatus }): Promise<SystemEvent[]> {
    try {
      const from = this.meta.pendingFrom();
      const [stmt, args, floor] =
        opts.status === 'pending'
          ? [this.q.listPendingEvents, [], from]
          : opts.status === 'consumed'
            ? [this.q.listConsumedEvents, [from], 0]
            : [this.q.listEvents, [], 0];
      return await this.newestFirst({
        stmt,
        args,
        key: 'seq',
        floor,
        end: this.end('endEvents'),
        window: LIST_WINDOW,
        limit: opts.limit,
        map: toEvent,
      });
    } catch (err) {
      throw contractError(err);
    }
  }
}
