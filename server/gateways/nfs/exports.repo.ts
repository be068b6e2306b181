/**
 * NFS exports (`nfs_exports`, owned by the gateways): what is served, to
 * which client addresses, with whose rights. Reads are cheap and cached by
 * the gateway between changes (`version` moves on every write).
 */
import type { NfsExportView } from '../../contract';
import type { Db, TenantScope } from '../../db';

/** A stored export: what the admin sees, and the tenant of its account (the one its rights are read in). */
export type NfsExport = NfsExportView & TenantScope;

export type NfsExportInput = Omit<NfsExport, 'id' | 'created_at'>;

type Row = Omit<NfsExport, 'read_only'> & { read_only: number };
const present = (r: Row): NfsExport => ({ ...r, read_only: r.read_only === 1 });

export class NfsExportsRepo {
  /** Moves after every change has committed, so a cache knows to read again. */
  version = 0;

  constructor(private db: Db) {}

  /** Every export, oldest first. */
  async list(): Promise<NfsExport[]> {
    return (await this.db.async.all(this.db.k.selectFrom('nfs_exports').selectAll().orderBy('id'))).map(present);
  }

  /** One export, or null. */
  async get(id: number): Promise<NfsExport | null> {
    const r = await this.db.async.first(this.db.k.selectFrom('nfs_exports').selectAll().where('id', '=', id));
    return r ? present(r) : null;
  }

  /** Stores a new export; the stored export. */
  async add(e: NfsExportInput): Promise<NfsExport> {
    const row = await this.db.async.first(
      this.db.k
        .insertInto('nfs_exports')
        .values({ ...e, read_only: e.read_only ? 1 : 0, created_at: new Date().toISOString() })
        .returningAll(),
    );
    this.version++;
    return present(row!);
  }

  /** Replaces the fields given; false when there is no such export. */
  async update(id: number, e: Partial<NfsExportInput>): Promise<boolean> {
    const { read_only, ...rest } = e;
    const set = { ...rest, ...(read_only === undefined ? {} : { read_only: read_only ? 1 : 0 }) };
    if (Object.keys(set).length === 0) return (await this.get(id)) !== null;
    const n = await this.db.async.run(this.db.k.updateTable('nfs_exports').set(set).where('id', '=', id));
    this.version++;
    return n > 0;
  }

  /** Removes an export; false when there was none (of two removals racing, one answers true). Idempotent. */
  async remove(id: number): Promise<boolean> {
    const n = await this.db.async.run(this.db.k.deleteFrom('nfs_exports').where('id', '=', id));
    this.version++;
    return n > 0;
  }
}
