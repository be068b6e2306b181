/**
 * `docserver_saves`: the newest document-editor save written back, per node
 * (the docserver module owns the table; `callback.service.ts` holds the
 * rules). The service reads the row, writes the file, then records: the file
 * write sits between, so that is no unit of work; saves of one node are
 * serialised in the service instead. A row carries its node's tenant.
 */
import type { Db, TenantScope } from '../db';
import type { DocserverSavesTable } from '../db/tables';

export type SaveRow = Omit<DocserverSavesTable, 'tenant_id'>;

export class DocserverSavesRepo {
  constructor(private db: Db) {}

  /** The newest save recorded for the tenant's node, or undefined (another tenant's too). */
  async last(s: TenantScope, node: number): Promise<SaveRow | undefined> {
    const row = await this.db.async.first(
      this.db.k
        .selectFrom('docserver_saves')
        .select(['node_id', 'doc_key', 'lastsave', 'etag', 'saved_at'])
        .where('tenant_id', '=', s.tenant_id)
        .where('node_id', '=', node),
    );
    // `lastsave` is epoch ms: a bigint, which PostgreSQL answers as a string.
    return row && { ...row, node_id: Number(row.node_id), lastsave: Number(row.lastsave) };
  }

  /** Records a save written to the tenant's node (replaces its earlier one; never another tenant's row). */
  async record(s: TenantScope, save: SaveRow): Promise<void> {
    const { node_id, ...rest } = save;
    await this.db.async.run(
      this.db.k
        .insertInto('docserver_saves')
        .values({ ...save, tenant_id: s.tenant_id })
        .onConflict((oc) => oc.column('node_id').doUpdateSet(rest).where('docserver_saves.tenant_id', '=', s.tenant_id)),
    );
  }
}
