/**
 * Typed in-process event bus with a transactional outbox: `record()` writes the
 * event row inside the caller's transaction; `flush()` (called after commit)
 * publishes pending rows to subscribers in order and marks them published.
 * Subscribers (audit, bell, webhooks, realtime, host notifications) never run
 * inside a database transaction, and a crash between commit and publish is
 * recovered by publishing leftover rows on the next boot.
 */
import { isBusy, type Sqlite } from '../db';

/** How soon publishing resumes after the database was held by another program. */
const BUSY_RETRY_MS = 250;
import type { EventMap, EventName } from './types';

export type Listener<E extends EventName> = (payload: EventMap[E], meta: { id: number; event: E; at: string }) => void | Promise<void>;
type AnyListener = (payload: unknown, meta: { id: number; event: string; at: string }) => void | Promise<void>;

export class EventBus {
  private listeners = new Map<string, Set<AnyListener>>();
  private wildcard = new Set<AnyListener>();
  private insert;
  private pending;
  private markDone;
  private flushing: Promise<void> | null = null;
  private again = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(private sqlite: Sqlite, private log: (msg: string, err?: unknown) => void = () => {}) {
    this.insert = sqlite.prepare('INSERT INTO outbox (event, payload, created_at) VALUES (?, ?, ?)');
    this.pending = sqlite.prepare('SELECT id, event, payload, created_at FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT 500');
    this.markDone = sqlite.prepare('UPDATE outbox SET published_at = ? WHERE id = ?');
  }

  /** Subscribes to one event, or to all with '*'. Returns an unsubscribe function. */
  on<E extends EventName>(event: E | '*', fn: Listener<E>): () => void {
    const set = event === '*' ? this.wildcard : this.listeners.get(event) ?? this.listeners.set(event, new Set()).get(event)!;
    set.add(fn as AnyListener);
    return () => set.delete(fn as AnyListener);
  }

  /** Writes the event to the outbox; call inside the transaction of the change it describes. */
  record<E extends EventName>(event: E, payload: EventMap[E]): void {
    this.insert.run(event, JSON.stringify(payload), new Date().toISOString());
  }

  /** Records and publishes at once (for events not tied to a transaction). */
  emit<E extends EventName>(event: E, payload: EventMap[E]): Promise<void> {
    this.record(event, payload);
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
          const rows = this.pending.all() as Array<{ id: number; event: string; payload: string; created_at: string }>;
          if (rows.length === 0) break;
          for (const row of rows) {
            // Mark first: a listener that throws must not make the row publish twice.
            try {
              this.markDone.run(new Date().toISOString(), row.id);
            } catch (e) {
              // Held by another program: the row stays pending and this pass resumes shortly, in order.
              if (!isBusy(e)) throw e;
              this.retry ??= setTimeout(() => ((this.retry = null), void this.flush()), BUSY_RETRY_MS);
              this.retry.unref();
              return;
            }
            const payload = JSON.parse(row.payload);
            const meta = { id: row.id, event: row.event, at: row.created_at };
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

  /** Deletes published rows older than `ms`. */
  prune(ms: number): number {
    return this.sqlite.prepare('DELETE FROM outbox WHERE published_at IS NOT NULL AND published_at < ?').run(new Date(Date.now() - ms).toISOString()).changes;
  }
}
