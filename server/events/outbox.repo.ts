/**
 * The outbox table (owned by events): events recorded inside the transaction of the change they describe,
 * published after commit. Synchronous for now (issue 30 continues): `record` must run inside its caller's
 * synchronous transaction (the write gate's and others'), and the statements stay prepared once because
 * every write records and every event publishes through them.
 */
import type { Db } from '../db';
import type { Tx } from '../db/async';

export interface OutboxRow {
  id: number;
  event: string;
  payload: string;
  created_at: string;
}

export class OutboxRepo {
  private s;
  constructor(private db: Db) {
    const q = (sql: string) => db.sqlite.prepare(sql);
    this.s = {
      insert: q('INSERT INTO outbox (event, payload, created_at) VALUES (?, ?, ?)'),
      pending: q('SELECT id, event, payload, created_at FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT 500'),
      // Conditional: of several instances publishing at once, one marks (and publishes) each row.
      markPublished: q('UPDATE outbox SET published_at = ? WHERE id = ? AND published_at IS NULL'),
    };
  }

  insert(event: string, payload: string, at: string): void {
    this.s.insert.run(event, payload, at);
  }

  /** The same row as a statement of the caller's unit of work (`db.async.unit`). */
  *insertIn(t: Tx, event: string, payload: string, at: string) {
    yield* t.sql('INSERT INTO outbox (event, payload, created_at) VALUES (?, ?, ?)', [event, payload, at]);
  }

  /** Several rows of one event in one transaction of their own. */
  insertAll(event: string, payloads: string[], at: string): void {
    this.db.sqlite.transaction(() => {
      for (const p of payloads) this.s.insert.run(event, p, at);
    })();
  }

  /** The oldest unpublished rows (500 at most), in order. */
  pending(): OutboxRow[] {
    return this.s.pending.all() as OutboxRow[];
  }

  /** Marks a row published; false when it already was (another instance won it). */
  markPublished(id: number, at: string): boolean {
    return this.s.markPublished.run(at, id).changes > 0;
  }

  /** Deletes published rows older than `before`; how many. */
  prune(before: string): number {
    return this.db.run(this.db.k.deleteFrom('outbox').where('published_at', 'is not', null).where('published_at', '<', before));
  }
}
