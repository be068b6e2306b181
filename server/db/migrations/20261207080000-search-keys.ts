import { portable } from './kit';

/**
 * SQLite: what a content search's order and access filter read of every hit, beside its key (issue 34,
 * docs/benchmarks.md, "Sort keys beside the index"). A common word has ~3,000 hits among a million nodes,
 * each on another page of `nodes`; the search ordered and filtered them there (every row whole, through the
 * page cache) to keep a page of 100. This index holds only the live rows' storage, type, sort key and path,
 * keyed by id (60 MB at a million nodes, less than half the table): the hits are looked up in it and only
 * the page's rows in `nodes`; the statement alone went from 18.6 to 9.6 ms of CPU. SQLite keeps it current
 * on every write (a rename, a move, a delete), so no write path has a copy to keep. PostgreSQL: an
 * index-only scan of the same columns was no faster than the table's rows (126 MB against 181 MB, both past
 * its shared buffers): none there.
 */
export const searchKeys = portable('20261207080000-search-keys', ({ per }) => [
  per({
    // deleted_at is always NULL in it, but SQLite reads the column to test the search's term: without it
    // the hits went to the table again.
    sqlite: 'CREATE INDEX nodes_search_keys ON nodes (id, storage_id, type, sort_key, path, deleted_at) WHERE deleted_at IS NULL',
    postgres: '',
  }),
]);
