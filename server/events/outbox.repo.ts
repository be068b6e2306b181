/**
 * The outbox table (owned by events): events recorded inside the unit of work of the change they describe
 * (`insertIn`), published after commit. All on `db.async`; the statements are raw SQL (every write records
 * and every event publishes through them, and SQLite keeps them prepared). `insert` stays synchronous
 * only for the sign-in's synchronous transaction (auth.service.ts), until it records with `insertIn`.
 */
import type { Db } from '../db';
import type { Tx } from '../db/async';

export interface OutboxRow {
  id: number;
  event: string;
  payload: string;
  created_at: string;
}

const Q = {
  insert: 'INSERT INTO outbox (event, payload, created_at) VALUES (?, ?, ?)',
  pending: 'SELECT id, event, payload, created_at FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT 500',
  // Conditional: of several instances publishing at once, one marks (and publishes) each row.
  markPublished: 'UPDATE outbox SET published_at = ? WHERE id = ? AND published_at IS NULL RETURNING id',
};

export class OutboxRepo {
  constructor(private db: Db) {}

  /** One row in a statement of its own (an event tied to no other change). */
  async insertOne(event: string, payload: string, at: string): Promise<void> {
    await this.db.async.sql(Q.insert, [event, payload, at]);
  }

  /** The same row as a statement of the caller's unit of work (`db.async.unit`). */
  *insertIn(t: Tx, event: string, payload: string, at: string) {
    yield* t.sql(Q.insert, [event, payload, at]);
  }

  /** Several rows of one event in one unit of their own: all or none. */
  async insertAll(event: string, payloads: string[], at: string, o: { waitMs?: number } = {}): Promise<void> {
    const insertIn = this.insertIn.bind(this);
    await this.db.async.unit(function* (t) {
      for (const p of payloads) yield* insertIn(t, event, p, at);
    }, o);
  }

  /** The oldest unpublished rows (500 at most), in order. */
  async pending(): Promise<OutboxRow[]> {
    const rows = await this.db.async.sql<OutboxRow>(Q.pending);
    return rows.map((r) => ({ ...r, id: Number(r.id) }));
  }

  /** Marks a row published; false when it already was (another instance won it). */
  async markPublished(id: number, at: string): Promise<boolean> {
    return (await this.db.async.sql(Q.markPublished, [at, id])).length > 0;
  }

  /** Deletes published rows older than `before`; how many. */
  prune(before: string): Promise<number> {
    return this.db.async.run(this.db.k.deleteFrom('outbox').where('published_at', 'is not', null).where('published_at', '<', before));
  }
}
