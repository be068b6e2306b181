import type { Generated } from 'kysely';
import type { TenantRow } from './tenant-tables';

/** Row types of catalogue tables written outside the node rows' repository (see tables.ts). */

/**
 * catalogue: the name index for search (SQLite: an FTS5 trigram table, `rowid` its key; PostgreSQL: a
 * table with trigram indexes). `rowid` is the node's id.
 */
export interface SearchFtsTable {
  rowid: number;
  name: string | null;
  body: string | null;
  /** A photo's, a song's or a video's metadata as text (fulltext/media-meta.ts), searched with the body. */
  meta: string | null;
}

/** catalogue: a file's text extraction for search (catalogue/text-extracts.repo.ts). */
export interface TextExtractsTable extends TenantRow {
  node_id: number;
  state: 'pending' | 'done' | 'failed' | 'skipped';
  /** The version of the file the row describes. */
  size: number;
  mtime: number;
  reason: string | null;
  /** Characters stored in `search_fts.body`. */
  chars: Generated<number>;
  /** 1 when the text was cut at the stored-text cap. */
  capped: Generated<number>;
  /** When the photo was taken or the recording made (epoch ms), from its metadata. */
  taken: number | null;
  updated_at: string;
}

/** catalogue: requests per metered storage and UTC day, by class (catalogue/meter.ts). */
export interface StorageRequestsTable extends TenantRow {
  storage_id: number;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  list: number;
  head: number;
  get: number;
  put: number;
}

/** catalogue: a storage's daily budget of LIST+HEAD+GET requests (0 = unlimited). */
export interface StorageBudgetsTable extends TenantRow {
  storage_id: number;
  requests_per_day: number;
}
