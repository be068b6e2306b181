/**
 * Typed in-process event bus with a transactional outbox: `recordIn()` writes the
 * event row inside the caller's unit of work; `flush()` (called after commit)
 * publishes pending rows to subscribers in order and marks them published.
 * Subscribers (audit, bell, webhooks, realtime, host notifications) never run
 * inside a database transaction, and a crash between commit and publish is
 * recovered by publishing leftover rows on the next boot.
 *
 * Several instances on one database (docs/operations.md, "Several
 * instances"): a row is published by exactly one of them (the one whose
 * conditional mark wins), so audit rows, bell notices, webhooks and mail
 * happen once. Subscribers that keep per-process state (realtime frames, the
 * page cache) subscribe with `onEveryInstance`: the publishing instance
 * passes such events on through the change channel (db/channel.ts) and every
 * other instance calls those subscribers too.
 *
 * Every event belongs to the tenant of its change (docs/tenants.md): recording one takes a `TenantScope`
 * (the actor's, the storage's, `DEFAULT_TENANT` for the installation's own events), the outbox row keeps it,
 * and listeners get it in `meta.tenant`, on every instance.
 */
import { isBusy, type ChangeChannel, type Db } from '../db';
import { OutboxRepo, type OutboxRow } from './outbox.repo';
import type { Tx } from '../db/async';
import type { TenantScope } from '../db/tenant-tables';
import type { EventMap, EventName } from './types';

/** How soon publishing resumes after the database was held by another program. */
const BUSY_RETRY_MS = 250;

/** What a listener learns besides the payload: the outbox row's id (0 from another instance), event, time and tenant. */
export interface EventMeta<E extends string = string> {
  id: number;
  event: E;
  at: string;
  tenant: TenantScope;
}
export type Listener<E extends EventName> = (payload: EventMap[E], meta: EventMeta<E>) => void | Promise<void>;
type AnyListener = (payload: unknown, meta: EventMeta) => void | Promise<void>;

/** An event as it rides the change channel to the other instances: its tenant with it. */
interface ChannelEvent {
  tenant_id: number;
  payload: unknown;
}
const isChannelEvent = (d: unknown): d is ChannelEvent => !!d && typeof d === 'object' && Number.isInteger((d as ChannelEvent).tenant_id) && 'payload' in d;

export class EventBus {
  private listeners = new Map<string, Set<AnyListener>>();
  private wildcard = new Set<AnyListener>();
  /** Subscribers that run on every instance (per-process state), by event. */
  private everywhere = new Map<string, Set<AnyListener>>();
  private channel: ChangeChannel | null = null;
  /** Subscribers told that notices may have been missed (the channel reconnected): drop per-process caches. */
  private resyncs = new Set<() => void>();
  private outbox: OutboxRepo;
  private flushing: Promise<void> | null = null;
  private again = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    db: Db,
    private log: (msg: string, err?: unknown) => void = () => {},
  ) {
    this.outbox = new OutboxRepo(db);
  }

  /** Connects the bus to the other instances (PostgreSQL); events from them reach `onEveryInstance` subscribers. */
  attachChannel(channel: ChangeChannel): void {
    this.channel = channel;
    channel.subscribe((event, data) => {
      if (event === 'resync') {
        for (const fn of [...this.resyncs]) fn();
        return;
      }
      const set = this.everywhere.get(event);
      if (!set || !isChannelEvent(data)) return;
      const meta: EventMeta = { id: 0, event, at: new Date().toISOString(), tenant: { tenant_id: data.tenant_id } };
      for (const fn of [...set]) {
        Promise.resolve()
          .then(() => fn(data.payload, meta))
          .catch((err) => this.log(`event listener for ${event} (from another instance) failed`, err));
      }
    });
  }

  /**
   * Subscribes to an event published by any instance on the database: per-process state (realtime frames,
   * caches) that must follow changes made through another instance. `resync`, when given, is called after
   * notices may have been lost (the channel reconnected). Once-only work (audit, mail) uses `on`.
   */
  onEveryInstance<E extends EventName>(event: E, fn: Listener<E>, resync?: () => void): () => void {
    const offLocal = this.on(event, fn);
    const set = this.everywhere.get(event) ?? this.everywhere.set(event, new Set()).get(event)!;
    set.add(fn as AnyListener);
    if (resync) this.resyncs.add(resync);
    return () => {
      offLocal();
      set.delete(fn as AnyListener);
      if (resync) this.resyncs.delete(resync);
    };
  }

  /** Subscribes to one event, or to all with '*'. Returns an unsubscribe function. */
  on<E extends EventName>(event: E | '*', fn: Listener<E>): () => void {
    const set = event === '*' ? this.wildcard : (this.listeners.get(event) ?? this.listeners.set(event, new Set()).get(event)!);
    set.add(fn as AnyListener);
    return () => set.delete(fn as AnyListener);
  }

  /**
   * Writes the event of tenant `s` to the outbox as a statement of the caller's unit of work (`db.async.unit`):
   * `yield* bus.recordIn(t, storage, 'file.updated', {...})`.
   */
  *recordIn<E extends EventName>(t: Tx, s: TenantScope, event: E, payload: EventMap[E]) {
    yield* this.outbox.insertIn(t, s, event, JSON.stringify(payload), new Date().toISOString());
  }

  /**
   * Writes a batch of one event of tenant `s` in a unit of its own (a change already committed, told in one
   * go); `waitMs`: how long to wait out a database held elsewhere before `database_busy`.
   */
  recordAll<E extends EventName>(s: TenantScope, event: E, payloads: Array<EventMap[E]>, o: { waitMs?: number } = {}): Promise<void> {
    return this.outbox.insertAll(
      s,
      event,
      payloads.map((p) => JSON.stringify(p)),
      new Date().toISOString(),
      o,
    );
  }

  /** Records an event of tenant `s` and publishes at once (for events not tied to a transaction). */
  async emit<E extends EventName>(s: TenantScope, event: E, payload: EventMap[E]): Promise<void> {
    await this.outbox.insertOne(s, event, JSON.stringify(payload), new Date().toISOString());
    return this.flush();
  }

  /** Publishes every unpublished outbox row. Safe to call often; runs one pass at a time. */
  flush(): Promise<void> {
    if (this.flushing) {
      this.again = true;
      return this.flushing;
    }
    this.flushing = (async () => {
      do {
        this.again = false;
        for (;;) {
          let rows: OutboxRow[];
          try {
            rows = await this.outbox.pending();
          } catch (e) {
            // The database is away or held: the rows stay pending and a later pass publishes them, in order.
            if (!isBusy(e)) throw e;
            this.retryLater();
            return;
          }
          if (rows.length === 0) break;
          for (const row of rows) {
            // Mark first: a listener that throws must not make the row publish twice.
            try {
              // Another instance published it meanwhile (several instances on one database).
              if (!(await this.outbox.markPublished(row, new Date().toISOString()))) continue;
            } catch (e) {
              // Held by another program: the row stays pending and this pass resumes shortly, in order.
              if (!isBusy(e)) throw e;
              this.retryLater();
              return;
            }
            const payload = JSON.parse(row.payload);
            const meta: EventMeta = { id: row.id, event: row.event, at: row.created_at, tenant: { tenant_id: row.tenant_id } };
            if (this.channel && this.everywhere.has(row.event)) this.channel.publish(row.event, { tenant_id: row.tenant_id, payload } satisfies ChannelEvent);
            for (const fn of [...(this.listeners.get(row.event) ?? []), ...this.wildcard]) {
              try {
                await fn(payload, meta);
              } catch (err) {
                this.log(`event listener for ${row.event} failed`, err);
              }
            }
          }
        }
      } while (this.again);
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Another pass shortly; nothing thrown out of its timer (a failure is logged, the rows stay pending). */
  private retryLater(): void {
    this.retry ??= setTimeout(() => {
      this.retry = null;
      this.flush().catch((e) => this.log('publishing events failed', e));
    }, BUSY_RETRY_MS);
    this.retry.unref();
  }

  /** Deletes every tenant's published rows older than `ms`. */
  prune(ms: number): Promise<number> {
    return this.outbox.prune(new Date(Date.now() - ms).toISOString());
  }
}
