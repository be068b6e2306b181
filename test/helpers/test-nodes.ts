/**
 * Catalogue rows for repository tests: node rows written straight into `nodes` (no search index rows,
 * as the sync engine leaves them), on either database.
 */
import type { Db } from '../../server/db';
import { sortKey } from '../../server/catalogue/natural';

/** A node to insert: its path (the name and folder come from it), a file unless it says otherwise. */
export interface TestNode {
  path: string;
  type?: 'dir' | 'file';
  size?: number;
  mtime?: number;
  app_state?: string | null;
}

/** Inserts the nodes into storage `storageId` in one statement; their ids, in order. */
export async function testNodes(db: Db, storageId: number, nodes: TestNode[]): Promise<number[]> {
  const rows = nodes.map((n) => {
    const cut = n.path.lastIndexOf('/');
    const name = n.path.slice(cut + 1);
    return {
      storage_id: storageId,
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
