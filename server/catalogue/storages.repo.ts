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
  /** '' = the whole storage; else a folder (relative path) and everything inside it. */
  path: string;
}

export const newUid = (): string => 'st' + randomBytes(8).toString('hex');

/**
 * The storages and their grants as this process last read them. Every file request resolves a storage and
 * its grants; reading them from SQLite each time cost ~10 % of a small-file GET (a WAL read transaction per
 * statement). The copy stays valid while this connection has changed nothing (`total_changes()`) and no other
 * process has committed (`PRAGMA data_version`, e.g. a CLI command; read at most once a millisecond, since
 * another process's commit has no ordering with our requests anyway). Rows are frozen: every caller shares them.
 */
/** SQLite's NOCASE folds ASCII letters only. */
const asciiLower = (s: string): string => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

interface Snapshot {
  changes: number;
  version: number;
  byId: Map<number, StorageRow>;
  byName: Map<string, StorageRow>;
  /** By name as written: the usual spelling of a path needs no case folding. */
  byExact: Map<string, StorageRow>;
  byUid: Map<string, StorageRow>;
  grants: Map<number, Grant[]>;
}

export class StoragesRepo {
  private hot?: { changes: Statement; version: Statement; rows: Statement; grants: Statement };
  private snap?: Snapshot;
  private versionAt = -Infinity;

  constructor(private db: Db) {}

  private get q() {
    return (this.hot ??= {
      changes: this.db.sqlite.prepare('SELECT total_changes()').pluck(),
      version: this.db.sqlite.prepare('PRAGMA data_version').pluck(),
      rows: this.db.sqlite.prepare('SELECT * FROM storages ORDER BY id'),
      grants: this.db.sqlite.prepare('SELECT id, storage_id, user_id, group_name, level, path FROM storage_grants ORDER BY id'),
    });
  }

  private current(): Snapshot {
    const changes = this.q.changes.get() as number;
    const now = performance.now();
    if (this.snap && this.snap.changes === changes && now - this.versionAt < 1) return this.snap;
    const version = this.q.version.get() as number;
    this.versionAt = now;
    if (this.snap && this.snap.changes === changes && this.snap.version === version) return this.snap;
    const snap: Snapshot = { changes, version, byId: new Map(), byName: new Map(), byExact: new Map(), byUid: new Map(), grants: new Map() };
    for (const r of this.q.rows.all() as StorageRow[]) {
      const row = Object.freeze(r);
      snap.byId.set(row.id, row);
      snap.byName.set(asciiLower(row.name), row);
      snap.byExact.set(row.name, row);
      snap.byUid.set(row.uid, row);
    }
    for (const g of this.q.grants.all() as Array<{
      id: number;
      storage_id: number;
      user_id: number | null;
      group_name: string | null;
      level: 'viewer' | 'editor';
      path: string;
    }>) {
      const list = snap.grants.get(g.storage_id) ?? snap.grants.set(g.storage_id, []).get(g.storage_id)!;
      list.push(Object.freeze({ id: g.id, user_id: g.user_id, group: g.group_name, level: g.level, path: g.path }));
    }
    for (const list of snap.grants.values()) Object.freeze(list);
    return (this.snap = snap);
  }

  all(): StorageRow[] {
    return [...this.current().byId.values()];
  }

  byId(id: number): StorageRow | undefined {
    return this.current().byId.get(id);
  }

  byUid(uid: string): StorageRow | undefined {
    return this.current().byUid.get(uid);
  }

  /** By name (case-insensitive) or by uid: both address a storage everywhere. */
  byNameOrUid(key: string): StorageRow | undefined {
    const snap = this.current();
    return snap.byUid.get(key) ?? snap.byExact.get(key) ?? snap.byName.get(asciiLower(key));
  }

  nameTaken(name: string, exceptId = -1): boolean {
    return !!this.db.sqlite.prepare('SELECT 1 FROM storages WHERE (name = ? OR uid = ?) AND id != ?').get(name, name, exceptId);
  }

  insert(r: Omit<StorageRow, 'id' | 'created_at' | 'updated_at' | 'status' | 'status_reason' | 'last_sync_at' | 'volume'>): number {
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
    this.db.sqlite
      .prepare(`UPDATE storages SET ${keys.map((k) => `${k} = @${k}`).join(', ')}, updated_at = @updated_at WHERE id = @id`)
      .run({ ...patch, id, updated_at: new Date().toISOString() });
  }

  /** Unlinks every storage from replication target `targetId` (the target was deleted). Returns how many. */
  unlinkReplicaTarget(targetId: number): number {
    return this.db.sqlite
      .prepare('UPDATE storages SET replica_target_id = NULL, updated_at = ? WHERE replica_target_id = ?')
      .run(new Date().toISOString(), targetId).changes;
  }

  /** A full sync of the storage finished: its catalogue is whole from now on (catalogue/syncer.ts `listed`). */
  markSynced(id: number): void {
    this.db.sqlite.prepare('UPDATE storages SET last_sync_at = ? WHERE id = ?').run(new Date().toISOString(), id);
  }

  setStatus(id: number, status: 'online' | 'offline', reason: string | null): void {
    this.db.sqlite
      .prepare("UPDATE storages SET status = ?, status_reason = ? WHERE id = ? AND (status != ? OR COALESCE(status_reason, '') != COALESCE(?, ''))")
      .run(status, reason, id, status, reason);
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
    return this.current().grants.get(storageId) ?? [];
  }

  /** All grants, grouped by storage. */
  allGrants(): Map<number, Grant[]> {
    return this.current().grants;
  }

  /** Replaces the storage-wide grants (path ''); folder grants (home folders) stay. */
  replaceGrants(storageId: number, grants: Array<Omit<Grant, 'id' | 'path'>>): void {
    const s = this.db.sqlite;
    s.transaction(() => {
      s.prepare("DELETE FROM storage_grants WHERE storage_id = ? AND path = ''").run(storageId);
      const ins = s.prepare("INSERT INTO storage_grants (storage_id, user_id, group_name, level, path) VALUES (?, ?, ?, ?, '')");
      for (const g of grants) ins.run(storageId, g.user_id, g.group, g.level);
    })();
  }

  /** Gives one person `level` on the folder `path` (their home), once. */
  grantFolder(storageId: number, userId: number, path: string, level: 'viewer' | 'editor'): void {
    const s = this.db.sqlite;
    s.transaction(() => {
      if (s.prepare('SELECT 1 FROM storage_grants WHERE storage_id = ? AND user_id = ? AND path = ?').get(storageId, userId, path)) return;
      s.prepare('INSERT INTO storage_grants (storage_id, user_id, group_name, level, path) VALUES (?, ?, NULL, ?, ?)').run(storageId, userId, level, path);
    })();
  }
}
