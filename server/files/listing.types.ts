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
