/** Types shared by the listing's SQL pages (listing.repo.ts) and in-memory indexes (folder-index.ts). */

export type SortField = 'name' | 'size' | 'modified';

/** Where the previous page ended: (type, sort value, sort_key, id) of its last row. */
export interface Keyset {
  type: 'dir' | 'file';
  value: number;
  key: string;
  id: number;
}
