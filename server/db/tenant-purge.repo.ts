/**
 * A deleted tenant's rows, removed from every scoped table (docs/tenants.md, "Step 4: the leftovers"). The one
 * place that deletes rows of every module: the tenant is gone, so no owner serves them any more, and one list
 * (`SCOPED`) says what to remove. Each statement names `tenant_id` (the static scan and the run-time guard
 * accept it) and removes at most one batch, so a large tenant never holds the write lock for long.
 */
import { AppError } from '../errors';
import type { Db, Unit } from './index';
import { DEFAULT_TENANT, SCOPED, type TenantScope } from './tenant-tables';

export type ScopedTable = (typeof SCOPED)[number];

/**
 * Children before their parents (every foreign key cascades, but a cascade from a parent batch would remove an
 * unbounded number of child rows in that batch's unit). `storages` before `share_tombstones`: deleting a storage
 * writes its links' tombstones (a trigger). Checked against the schema's foreign keys by the repository's test.
 */
const FIRST: readonly ScopedTable[] = [
  'upload_parts',
  'op_journal',
  'assistant_steps',
  'encrypted_folder_keys',
  'encrypted_thumbs',
  'drop_files',
  'link_streams',
  'link_visitors',
  'link_strikes',
  'sync_errors',
  'docserver_saves',
  'file_locks',
  'text_extracts',
  'app_plugin_kv',
  'app_plugin_lock_tokens',
  'app_plugin_wakeups',
  'app_plugin_schedule_runs',
  'app_plugin_licenses',
  'nfs_exports',
  'drop_submissions',
  'encrypted_folders',
];
const LAST: readonly ScopedTable[] = ['storages', 'share_tombstones', 'users', 'groups', 'roles'];

/** Every scoped table in the order a purge empties them. */
export const PURGE_ORDER: readonly ScopedTable[] = [...FIRST, ...SCOPED.filter((t) => !FIRST.includes(t) && !LAST.includes(t)), ...LAST];

export class TenantPurgeRepo {
  /** SQLite: the columns that name one row of each table (its primary key, else `rowid`), read once. */
  private keys = new Map<string, string[]>();

  constructor(private db: Db) {}

  /**
   * Deletes at most `limit` of the tenant's rows from `table`, in one unit; the number deleted (fewer than
   * `limit`: the table holds none of the tenant's any more). Refuses (`internal`) tenant 1 and any tenant that
   * is not a tombstone: a purge never touches a live tenant.
   */
  async batch(t: TenantScope, table: ScopedTable, limit: number): Promise<number> {
    if (t.tenant_id === DEFAULT_TENANT.tenant_id) throw new AppError('internal', { reason: 'tenant 1 is never purged' });
    const del = await this.deleteText(table);
    const id = t.tenant_id;
    return this.db.async.unit(function* (tx): Unit<number> {
      const tomb = yield* tx.sql('SELECT id FROM tenants WHERE id = ? AND deleted_at IS NOT NULL', [id]);
      if (!tomb.length) throw new AppError('internal', { reason: `tenant ${id} is not deleted` });
      return (yield* tx.sql<{ n: number }>(del, [id, id, limit])).length;
    });
  }

  /** The statement that deletes one batch, returning one row per deleted row. */
  private async deleteText(table: ScopedTable): Promise<string> {
    if (this.db.dialect === 'postgres')
      // `ctid`: every table has one, whatever its key; `= ANY(ARRAY(…))` is a TID scan.
      return `DELETE FROM ${table} WHERE tenant_id = ? AND ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE tenant_id = ? LIMIT ?)) RETURNING 1 AS n`;
    const cols = await this.keyOf(table);
    const key = cols.length === 1 ? cols[0] : `(${cols.join(', ')})`;
    return `DELETE FROM ${table} WHERE tenant_id = ? AND ${key} IN (SELECT ${cols.join(', ')} FROM ${table} WHERE tenant_id = ? LIMIT ?) RETURNING 1 AS n`;
  }

  private async keyOf(table: ScopedTable): Promise<string[]> {
    let cols = this.keys.get(table);
    if (!cols) {
      const rows = await this.db.async.sql<{ name: string }>('SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk', [table]);
      // No primary key: a rowid table (WITHOUT ROWID needs one).
      cols = rows.length ? rows.map((r) => r.name) : ['rowid'];
      this.keys.set(table, cols);
    }
    return cols;
  }
}
