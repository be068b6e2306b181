/** The storages and storage_grants tables (owner: catalogue). */
import { randomBytes } from 'node:crypto';
import type { Db, Statement } from '../db';
import type { StoragesTable } from '../db/tables';

export type StorageRow = Omit<StoragesTable, 'id'> & { id: number };
export interface Grant {
  id: number;
  user_id: number | null;
  group: string | null;
  level: 'viewer' | 'editor';
}

export const newUid = (): string => 'st' + randomBytes(8).toString('hex');

export class StoragesRepo {
  /** Statements of the lookups every file request makes, prepared once (a prepare costs more than the query). */
  private hot?: { byId: Statement; byKey: Statement; grants: Statement };

  constructor(private db: Db) {}

  private get q() {
    return (this.hot ??= {
      byId: this.db.sqlite.prepare('SELECT * FROM storages WHERE id = ?'),
      byKey: this.db.sqlite.prepare('SELECT * FROM storages WHERE name = ? OR uid = ? ORDER BY uid = ? DESC LIMIT 1'),
      grants: this.db.sqlite.prepare('SELECT id, user_id, group_name, level FROM storage_grants WHERE storage_id = ? ORDER BY id'),
    });
  }

  all(): StorageRow[] {
    return this.db.sqlite.prepare('SELECT * FROM storages ORDER BY id').all() as StorageRow[];
  }

  byId(id: number): StorageRow | undefined {
    return this.q.byId.get(id) as StorageRow | undefined;
  }

  byUid(uid: string): StorageRow | undefined {
    return this.db.sqlite.prepare('SELECT * FROM storages WHERE uid = ?').get(uid) as StorageRow | undefined;
  }

  /** By name (case-insensitive) or by uid: both address a storage everywhere. */
  byNameOrUid(key: string): StorageRow | undefined {
    return this.q.byKey.get(key, key, key) as StorageRow | undefined;
  }

  nameTaken(name: string, exceptId = -1): boolean {
    return !!this.db.sqlite.prepare('SELECT 1 FROM storages WHERE (name = ? OR uid = ?) AND id != ?').get(name, name, exceptId);
  }

  insert(r: Omit<StorageRow, 'id' | 'created_at' | 'updated_at' | 'status' | 'status_reason' | 'last_sync_at'>): number {
    const now = new Date().toISOString();
    return Number(
      this.db.sqlite
        .prepare(
          `INSERT INTO storages (uid, name, driver, config, mount_path, sync_mode, sync_interval_s, enabled, read_only, rbac_enabled, replica_target_id, created_at, updated_at)
           VALUES (@uid, @name, @driver, @config, @mount_path, @sync_mode, @sync_interval_s, @enabled, @read_only, @rbac_enabled, @replica_target_id, @now, @now)`,
        )
        .run({ ...r, now }).lastInsertRowid,
    );
  }

  update(id: number, patch: Partial<StorageRow>): void {
    const keys = Object.keys(patch).filter((k) => k !== 'id' && k !== 'uid');
    if (!keys.length) return;
    this.db.sqlite.prepare(`UPDATE storages SET ${keys.map((k) => `${k} = @${k}`).join(', ')}, updated_at = @updated_at WHERE id = @id`).run({ ...patch, id, updated_at: new Date().toISOString() });
  }

  /** Unlinks every storage from replication target `targetId` (the target was deleted). Returns how many. */
  unlinkReplicaTarget(targetId: number): number {
    return this.db.sqlite.prepare('UPDATE storages SET replica_target_id = NULL, updated_at = ? WHERE replica_target_id = ?').run(new Date().toISOString(), targetId).changes;
  }

  setStatus(id: number, status: 'online' | 'offline', reason: string | null): void {
    this.db.sqlite.prepare('UPDATE storages SET status = ?, status_reason = ? WHERE id = ? AND (status != ? OR IFNULL(status_reason, \'\') != IFNULL(?, \'\'))').run(status, reason, id, status, reason);
  }

  /** Removes the storage, its cache rows and their search rows; backend files are untouched. */
  delete(id: number): void {
    const s = this.db.sqlite;
    s.transaction(() => {
      s.prepare('DELETE FROM search_fts WHERE rowid IN (SELECT id FROM nodes WHERE storage_id = ?)').run(id);
      s.prepare('DELETE FROM storages WHERE id = ?').run(id);
    })();
  }

  grants(storageId: number): Grant[] {
    return (this.q.grants.all(storageId) as Array<{ id: number; user_id: number | null; group_name: string | null; level: 'viewer' | 'editor' }>).map((g) => ({ id: g.id, user_id: g.user_id, group: g.group_name, level: g.level }));
  }

  /** All grants, grouped by storage (one query per access decision set). */
  allGrants(): Map<number, Grant[]> {
    const out = new Map<number, Grant[]>();
    for (const g of this.db.sqlite.prepare('SELECT id, storage_id, user_id, group_name, level FROM storage_grants').all() as Array<{ id: number; storage_id: number; user_id: number | null; group_name: string | null; level: 'viewer' | 'editor' }>) {
      (out.get(g.storage_id) ?? out.set(g.storage_id, []).get(g.storage_id)!).push({ id: g.id, user_id: g.user_id, group: g.group_name, level: g.level });
    }
    return out;
  }

  replaceGrants(storageId: number, grants: Array<Omit<Grant, 'id'>>): void {
    const s = this.db.sqlite;
    s.transaction(() => {
      s.prepare('DELETE FROM storage_grants WHERE storage_id = ?').run(storageId);
      const ins = s.prepare('INSERT INTO storage_grants (storage_id, user_id, group_name, level) VALUES (?, ?, ?, ?)');
      for (const g of grants) ins.run(storageId, g.user_id, g.group, g.level);
    })();
  }
}
