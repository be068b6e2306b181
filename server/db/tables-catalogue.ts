/** Row types of catalogue tables written outside the node rows' repository (see tables.ts). */

/**
 * catalogue: the name index for search (SQLite: an FTS5 trigram table, `rowid` its key; PostgreSQL: a
 * table with trigram indexes). `rowid` is the node's id.
 */
export interface SearchFtsTable {
  rowid: number;
  name: string | null;
  body: string | null;
}

/** catalogue: requests per metered storage and UTC day, by class (catalogue/meter.ts). */
export interface StorageRequestsTable {
  storage_id: number;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  list: number;
  head: number;
  get: number;
  put: number;
}

/** catalogue: a storage's daily budget of LIST+HEAD+GET requests (0 = unlimited). */
export interface StorageBudgetsTable {
  storage_id: number;
  requests_per_day: number;
}
