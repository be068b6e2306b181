/**
 * The search name index's catch-up (`search_fts`, owned by the catalogue): the
 * indexer (search-index.ts) adds the names of nodes the sync inserted without
 * indexing them, one slice of ids at a time.
 */
import { sql } from 'kysely';
import type { Db, TenantScope } from '../db';

export class SearchIndexRepo {
  constructor(private db: Db) {}

  /** The highest node id of the tenants (0 when they have no node); the newest id first, so it reads a row or few. */
  async maxNodeId(tenants: TenantScope[]): Promise<number> {
    if (!tenants.length) return 0;
    const r = await this.db.async.first(
      this.db.k
        .selectFrom('nodes')
        .select('id')
        .where(
          'tenant_id',
          'in',
          tenants.map((t) => t.tenant_id),
        )
        .orderBy('id', 'desc')
        .limit(1),
    );
    return Number(r?.id ?? 0);
  }

  /**
   * Indexes the names of the tenants' nodes with `from <= id < to` that the index lacks; one statement, so it is
   * idempotent and two passes over the same slice index each name once. Returns how many it added.
   */
  indexSlice(tenants: TenantScope[], from: number, to: number): Promise<number> {
    if (!tenants.length) return Promise.resolve(0);
    const missing = this.db.k
      .selectFrom('nodes as n')
      .select(['n.id', 'n.name'])
      .where(
        'n.tenant_id',
        'in',
        tenants.map((t) => t.tenant_id),
      )
      .where('n.id', '>=', from)
      .where('n.id', '<', to)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('search_fts as f').select(sql`1`.as('one')).whereRef('f.rowid', '=', 'n.id'))));
    const insert = this.db.k.insertInto('search_fts').columns(['rowid', 'name']).expression(missing);
    // PostgreSQL: another instance's indexer may insert the same row meanwhile (SQLite has one writer, and
    // an FTS5 table takes no ON CONFLICT).
    return this.db.async.run(this.db.dialect === 'postgres' ? insert.onConflict((oc) => oc.column('rowid').doNothing()) : insert);
  }
}
