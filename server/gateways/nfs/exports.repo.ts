/**
 * NFS exports (`nfs_exports`, owned by the gateways): what is served, to
 * which client addresses, with whose rights. Reads are cheap and cached by
 * the gateway between changes (`version` moves on every write).
 */
import type { NfsExportView } from '../../contract';
import type { Db } from '../../db';

export type NfsExport = NfsExportView;

export type NfsExportInput = Omit<NfsExport, 'id' | 'created_at'>;

type Row = Omit<NfsExport, 'read_only'> & { read_only: number };
const present = (r: Row): NfsExport => ({ ...r, read_only: r.read_only === 1 });

export class NfsExportsRepo {
  /** Moves on every change, so a cache knows to read again. */
  version = 0;

  constructor(private db: Db) {}

  /** Every export, oldest first. */
  list(): NfsExport[] {
    return this.db.all(this.db.k.selectFrom('nfs_exports').selectAll().orderBy('id')).map(present);
  }

  /** One export, or null. */
  get(id: number): NfsExport | null {
    const r = this.db.first(this.db.k.selectFrom('nfs_exports').selectAll().where('id', '=', id));
    return r ? present(r) : null;
  }

  add(e: NfsExportInput): NfsExport {
    const row = this.db.first(
      this.db.k.insertInto('nfs_exports').values({ ...e, read_only: e.read_only ? 1 : 0, created_at: new Date().toISOString() }).returning('id'),
    );
    this.version++;
    return this.get(row!.id)!;
  }

  /** Replaces the fields given; false when there is no such export. */
  update(id: number, e: Partial<NfsExportInput>): boolean {
    const { read_only, ...rest } = e;
    const set = { ...rest, ...(read_only === undefined ? {} : { read_only: read_only ? 1 : 0 }) };
    if (Object.keys(set).length === 0) return this.get(id) !== null;
    const n = this.db.run(this.db.k.updateTable('nfs_exports').set(set).where('id', '=', id));
    this.version++;
    return n > 0;
  }

  /** Removes an export; false when there was none. Idempotent. */
  remove(id: number): boolean {
    const n = this.db.run(this.db.k.deleteFrom('nfs_exports').where('id', '=', id));
    this.version++;
    return n > 0;
  }
}
