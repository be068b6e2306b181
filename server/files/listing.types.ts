/** Types (and the order) shared by the listing's SQL pages (listing.repo.ts) and in-memory indexes (folder-index.ts). */

export type SortField = 'name' | 'size' | 'modified';

/** Where the previous page ended: (type, sort value, sort_key, id) of its last row. */
export interface Keyset {
  type: 'dir' | 'file';
  value: number;
  key: string;
  id: number;
}

/** The column of a sort field (a name sort orders by the natural key alone). */
export const SORT_COLUMN: Record<SortField, string | null> = { name: null, size: 'size', modified: 'mtime' };

/** A listing's ORDER BY: folders first, then the sort value, natural name and id, all in the chosen direction. */
export function listingOrder(sort: SortField, desc: boolean): string {
  const d = desc ? 'DESC' : 'ASC';
  const col = SORT_COLUMN[sort];
  return col ? `type, ${col} ${d}, sort_key ${d}, id ${d}` : `type, sort_key ${d}, id ${d}`;
}

/**
 * The condition (after the folder's) that keeps the rows after a keyset of type `type` in the listing's
 * order, on named parameters @av, @ak, @ai: after a folder come the rest of the folders and every file;
 * after a file, only files (two shapes so the file case stays one index range).
 */
export function afterSql(sort: SortField, desc: boolean, type: 'dir' | 'file'): string {
  const cmp = desc ? '<' : '>';
  const col = SORT_COLUMN[sort];
  const tuple = col ? `(${col}, sort_key, id) ${cmp} (@av, @ak, @ai)` : `(sort_key, id) ${cmp} (@ak, @ai)`;
  return type === 'dir' ? ` AND ((type = 'dir' AND ${tuple}) OR type = 'file')` : ` AND type = 'file' AND ${tuple}`;
}

/** The named parameters of `afterSql`. */
export const afterParams = (k: Keyset): Record<string, unknown> => ({ av: k.value, ak: k.key, ai: k.id });
