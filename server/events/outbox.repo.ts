/**
 * The outbox table (owned by events): events recorded inside the unit of work of the change they describe
 * (`insertIn`), published after commit. All on `db.async`; the statements are raw SQL (every write records
 * and every event publishes through them, and SQLite keeps them prepared). A row is written in the tenant of
 * its change (docs/tenants.md); the drain reads and prunes every tenant's rows (marked `every tenant`).
 */
import type { Db } from '../db';
import type { Tx } from '../db/async';
import type { TenantScope } from '../db/tenant-tables';

export interface OutboxRow {
  id: number;
  tenant_id: number;
  event: string;
  payload: string;
  created_at: string;
}

const Q = {
  insert: 'INSERT INTO outbox (tenant_id, event, payload, created_at) VALUES (?, ?, ?, ?)',
  pending: 'SELECT id, tenant_id, event, payload, created_at FROM outbox /* every tenant */ WHERE published_at IS NULL ORDER BY id LIMIT 500',
  // Conditional: of several instances publishing at once, one marks (and publishes) each row.
  markPublished: 'UPDATE outbox SET published_at = ? WHERE tenant_id = ? AND id = ? AND published_at IS NULL RETURNING id',
  prune: 'DELETE FROM outbox /* every tenant */ WHERE published_at IS NOT NULL AND published_at < ?',
};

export class OutboxRepo {
  constructor(private db: Db) {}

  /** One row of the tenant in a statement of its own (an event tied to no other change). */
  async insertOne(s: TenantScope, event: string, payload: string, at: string): Promise<void> {
    await this.db.async.sql(Q.insert, [s.tenant_id, event, payload, at]);
  }

  /** The same row as a statement of the caller's unit of work (`db.async.unit`). */
  *insertIn(t: Tx, s: TenantScope, event: string, payload: string, at: string) {
    yield* t.sql(Q.insert, [s.tenant_id, event, payload, at]);
  }

  /** Several rows of one event of the tenant in one unit of their own: all or none. */
  async insertAll(s: TenantScope, event: string, payloads: string[], at: string, o: { waitMs?: number } = {}): Promise<void> {
    const insertIn = this.insertIn.bind(this);
    await this.db.async.unit(function* (t) {
      for (const p of payloads) yield* insertIn(t, s, event, p, at);
    }, o);
  }

  /** The oldest unpublished rows of every tenant (500 at most), in order, each with its tenant. */
  async pending(): Promise<OutboxRow[]> {
    const rows = await this.db.async.sql<OutboxRow>(Q.pending);
    return rows.map((r) => ({ ...r, id: Number(r.id), tenant_id: Number(r.tenant_id) }));
  }

  /** Marks a row published; false when it already was (another instance won it). */
  async markPublished(row: Pick<OutboxRow, 'id' | 'tenant_id'>, at: string): Promise<boolean> {
    return (await this.db.async.sql(Q.markPublished, [at, row.tenant_id, row.id])).length > 0;
  }

  /** Deletes every tenant's published rows older than `before`; how many. */
  async prune(before: string): Promise<number> {
    return (await this.db.async.sql(`${Q.prune} RETURNING id`, [before])).length;
  }
}
