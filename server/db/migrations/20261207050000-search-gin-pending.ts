import { portable } from './kit';

/**
 * PostgreSQL: every search reads the whole pending list of each trigram GIN index it uses (rows inserted since
 * the list was last merged), and a table of a million rows is vacuumed only every 200,000 inserts, so the list
 * grows to its 4 MB default between merges. At a million files that list cost a search up to 83 ms (the
 * metadata index, 340 pages, docs/benchmarks.md); 512 kB bounds it to 64 pages, and inserts still go in batches.
 * SQLite's FTS5 has no such list.
 */
export const searchGinPending = portable('20261207050000-search-gin-pending', ({ per }) => [
  per({
    sqlite: '',
    postgres: ['search_fts_body_trgm', 'search_fts_meta_trgm', 'nodes_name_trgm'].map((i) => `ALTER INDEX ${i} SET (gin_pending_list_limit = 512)`).join(';\n'),
  }),
]);
