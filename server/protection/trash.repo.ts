/** The `trash_items` table: what sits in each storage's `.service-trash/`. */
import type { Db } from '../db';
import type { TrashItemsTable } from '../db/tables';

export type TrashRow = Omit<TrashItemsTable, 'id'> & { id: number };

export class TrashRepo {
  constructor(private db: Db) {}

  insert(r: Omit<TrashRow, 'id' | 'sha256'>): TrashRow {
    return this.db.sqlite
      .prepare(`INSERT INTO trash_items (storage_id, orig_path, trash_rel, type, size, reason, deleted_by, deleted_by_email, deleted_at)
                VALUES (@storage_id, @orig_path, @trash_rel, @type, @size, @reason, @deleted_by, @deleted_by_email, @deleted_at) RETURNING *`)
      .get(r) as TrashRow;
  }

  byId(id: number): TrashRow | undefined {
    return this.db.sqlite.prepare('SELECT * FROM trash_items WHERE id = ?').get(id) as TrashRow | undefined;
  }

  /** Items of the given storages, newest first. */
  list(storageIds: number[], limit: number, offset: number): { rows: TrashRow[]; total: number } {
    if (storageIds.length === 0) return { rows: [], total: 0 };
    const marks = storageIds.map(() => '?').join(',');
    const rows = this.db.sqlite.prepare(`SELECT * FROM trash_items WHERE storage_id IN (${marks}) ORDER BY deleted_at DESC, id DESC LIMIT ? OFFSET ?`).all(...storageIds, limit, offset) as TrashRow[];
    const total = (this.db.sqlite.prepare(`SELECT count(*) AS n FROM trash_items WHERE storage_id IN (${marks})`).get(...storageIds) as { n: number }).n;
    return { rows, total };
  }

  /** File items of the given storages (optionally only of one size), for content matching. */
  files(storageIds: number[], size?: number): TrashRow[] {
    if (storageIds.length === 0) return [];
    const marks = storageIds.map(() => '?').join(',');
    const bySize = size === undefined ? '' : ' AND size = ?';
    return this.db.sqlite
      .prepare(`SELECT * FROM trash_items WHERE type = 'file' AND storage_id IN (${marks})${bySize} ORDER BY deleted_at DESC LIMIT 2000`)
      .all(...storageIds, ...(size === undefined ? [] : [size])) as TrashRow[];
  }

  setSha(id: number, sha: string): void {
    this.db.sqlite.prepare('UPDATE trash_items SET sha256 = ? WHERE id = ?').run(sha, id);
  }

  /** Items deleted before `iso`, oldest first. */
  olderThan(iso: string, limit = 500): TrashRow[] {
    return this.db.sqlite.prepare('SELECT * FROM trash_items WHERE deleted_at < ? ORDER BY deleted_at LIMIT ?').all(iso, limit) as TrashRow[];
  }

  remove(id: number): void {
    this.db.sqlite.prepare('DELETE FROM trash_items WHERE id = ?').run(id);
  }
}
