/**
 * NFS exports (`nfs_exports`, owned by the gateways): what is served, to
 * which client addresses, with whose rights. Reads are cheap and cached by
 * the gateway between changes (`version` moves on every write).
 */
import type { NfsExportView } from '../../contract';
import type { Db, TenantScope } from '../../db';

/** A stored export: what the admin sees, and the tenant of its account (the one its rights are read in). */
export type NfsExport = Omit<NfsExportView, 'mount_path'> & TenantScope;

export type NfsExportInput = Omit<NfsExport, 'id' | 'created_at'>;
/** What is stored of an export besides its tenant (the scope names that). */
export type NfsExportFields = Omit<NfsExportInput, 'tenant_id'>;

type Row = Omit<NfsExport, 'read_only'> & { read_only: number };
const present = (r: Row): NfsExport => ({ ...r, read_only: r.read_only === 1 });

export class NfsExportsRepo {
  /** Moves after every change has committed, so a cache knows to read again. */
  version = 0;

  constructor(private db: Db) {}

  /** The tenant's exports, oldest first. */
  async list(s: TenantScope): Promise<NfsExport[]> {
    return (await this.db.async.all(this.db.k.selectFrom('nfs_exports').selectAll().where('tenant_id', '=', s.tenant_id).orderBy('id'))).map(present);
  }

  /** The exports of the tenants given (the gateway serves every tenant's: those with a storage), oldest first. */
  async among(tenants: readonly TenantScope[]): Promise<NfsExport[]> {
    if (!tenants.length) return [];
    const ids = tenants.map((t) => t.tenant_id);
    return (await this.db.async.all(this.db.k.selectFrom('nfs_exports').selectAll().where('tenant_id', 'in', ids).orderBy('id'))).map(present);
  }

  /** The tenant's export `id`, or null (another tenant's too). */
  async get(s: TenantScope, id: number): Promise<NfsExport | null> {
    const r = await this.db.async.first(this.db.k.selectFrom('nfs_exports').selectAll().where('tenant_id', '=', s.tenant_id).where('id', '=', id));
    return r ? present(r) : null;
  }

  /** Stores a new export in the tenant; the stored export. */
  async add(s: TenantScope, e: NfsExportFields): Promise<NfsExport> {
    const row = await this.db.async.first(
      this.db.k
        .insertInto('nfs_exports')
        .values({ ...e, tenant_id: s.tenant_id, read_only: e.read_only ? 1 : 0, created_at: new Date().toISOString() })
        .returningAll(),
    );
    this.version++;
    return present(row!);
  }

  /** Replaces the fields given; false when the tenant has no such export. */
  async update(s: TenantScope, id: number, e: Partial<NfsExportFields>): Promise<boolean> {
    const { read_only, ...rest } = e;
    const set = { ...rest, ...(read_only === undefined ? {} : { read_only: read_only ? 1 : 0 }) };
    if (Object.keys(set).length === 0) return (await this.get(s, id)) !== null;
    const n = await this.db.async.run(this.db.k.updateTable('nfs_exports').set(set).where('tenant_id', '=', s.tenant_id).where('id', '=', id));
    this.version++;
    return n > 0;
  }

  /** Removes the tenant's export; false when there was none (of two removals racing, one answers true). Idempotent. */
  async remove(s: TenantScope, id: number): Promise<boolean> {
    const n = await this.db.async.run(this.db.k.deleteFrom('nfs_exports').where('tenant_id', '=', s.tenant_id).where('id', '=', id));
    this.version++;
    return n > 0;
  }
}
