/**
 * Catalogue rows for repository tests: node rows written straight into `nodes` (no search index rows,
 * as the sync engine leaves them), on either database.
 */
import type { Db } from '../../server/db';
import { sortKey } from '../../server/catalogue/natural';
import type { StorageRef } from '../../server/catalogue';

/** A node to insert: its path (the name and folder come from it), a file unless it says otherwise. */
export interface TestNode {
  path: string;
  type?: 'dir' | 'file';
  size?: number;
  mtime?: number;
  app_state?: string | null;
}

/** Inserts the nodes into the storage (an id alone: tenant 1's) in one statement, in its tenant; their ids, in order. */
export async function testNodes(db: Db, storage: number | StorageRef, nodes: TestNode[]): Promise<number[]> {
  const s = typeof storage === 'number' ? { id: storage, tenant_id: 1 } : storage;
  const rows = nodes.map((n) => {
    const cut = n.path.lastIndexOf('/');
    const name = n.path.slice(cut + 1);
    return {
      tenant_id: s.tenant_id,
      storage_id: s.id,
      dir: cut < 0 ? '' : n.path.slice(0, cut),
      name,
      path: n.path,
      type: n.type ?? 'file',
      size: n.size ?? 0,
      mtime: n.mtime ?? 1_700_000_000_000,
      etag: null,
      mime: null,
      sort_key: sortKey(name),
      owner_id: null,
      app_state: n.app_state ?? null,
      updated_at: new Date().toISOString(),
    };
  });
  const ids = await db.async.all(db.k.insertInto('nodes').values(rows).returning('id'));
  return ids.map((r) => Number(r.id));
}
