/**
 * The `trash_items` table (owner: protection): what sits in each storage's `.service-trash/`. An item is
 * written in its storage's tenant, and every statement names the tenant (docs/tenants.md): another tenant's
 * item id is as unknown as a missing one.
 */
import type { Db, TenantScope } from '../db';
import type { TrashItemsTable } from '../db/tables';

export type TrashRow = Omit<TrashItemsTable, 'id'> & { id: number };

export class TrashRepo {
  constructor(private db: Db) {}

  /** Records an item moved into the trash, in the tenant of its storage; the stored row. */
  async insert(s: TenantScope, r: Omit<TrashRow, 'id' | 'sha256' | 'tenant_id'>): Promise<TrashRow> {
    return (await this.db.async.first(
      this.db.k
        .insertInto('trash_items')
        .values({ ...r, tenant_id: s.tenant_id })
        .returningAll(),
    )) as TrashRow;
  }

  /** The item, or undefined when unknown or another tenant's. */
  byId(s: TenantScope, id: number): Promise<TrashRow | undefined> {
    return this.db.async.first(this.db.k.selectFrom('trash_items').selectAll().where('tenant_id', '=', s.tenant_id).where('id', '=', id)) as Promise<
      TrashRow | undefined
    >;
  }

  /** The tenant's items of the given storages, newest first, and how many there are in all. */
  async list(s: TenantScope, storageIds: number[], limit: number, offset: number): Promise<{ rows: TrashRow[]; total: number }> {
    if (storageIds.length === 0) return { rows: [], total: 0 };
    const k = this.db.k;
    return this.db.async.read(function* (t) {
      const rows = yield* t.all(
        k
          .selectFrom('trash_items')
          .selectAll()
          .where('tenant_id', '=', s.tenant_id)
          .where('storage_id', 'in', storageIds)
          .orderBy('deleted_at', 'desc')
          .orderBy('id', 'desc')
          .limit(limit)
          .offset(offset),
      );
      const n = yield* t.first(
        k
          .selectFrom('trash_items')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('tenant_id', '=', s.tenant_id)
          .where('storage_id', 'in', storageIds),
      );
      return { rows: rows as TrashRow[], total: Number(n?.n ?? 0) };
    });
  }

  /** The tenant's file items of the given storages (optionally only of one size), newest first, at most 2000, for content matching. */
  async files(s: TenantScope, storageIds: number[], size?: number): Promise<TrashRow[]> {
    if (storageIds.length === 0) return [];
    let q = this.db.k
      .selectFrom('trash_items')
      .selectAll()
      .where('tenant_id', '=', s.tenant_id)
      .where('type', '=', 'file')
      .where('storage_id', 'in', storageIds);
    if (size !== undefined) q = q.where('size', '=', size);
    return (await this.db.async.all(q.orderBy('deleted_at', 'desc').limit(2000))) as TrashRow[];
  }

  /** Keeps an item's content hash (idempotent: the bytes in the trash do not change). */
  async setSha(s: TenantScope, id: number, sha: string): Promise<void> {
    await this.db.async.run(this.db.k.updateTable('trash_items').set({ sha256: sha }).where('tenant_id', '=', s.tenant_id).where('id', '=', id));
  }

  /** The tenant's items deleted before `iso`, oldest first. */
  async olderThan(s: TenantScope, iso: string, limit = 500): Promise<TrashRow[]> {
    return (await this.db.async.all(
      this.db.k.selectFrom('trash_items').selectAll().where('tenant_id', '=', s.tenant_id).where('deleted_at', '<', iso).orderBy('deleted_at').limit(limit),
    )) as TrashRow[];
  }

  /** Forgets an item (idempotent; another tenant's stays). */
  async remove(s: TenantScope, id: number): Promise<void> {
    await this.db.async.run(this.db.k.deleteFrom('trash_items').where('tenant_id', '=', s.tenant_id).where('id', '=', id));
  }
}
