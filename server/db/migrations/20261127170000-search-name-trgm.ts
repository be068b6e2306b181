import { portable } from './kit';

/**
 * PostgreSQL search matches names on `nodes` itself (`files/search.service.ts`): a trigram GIN index on
 * `nodes.name`, so a hit's recheck reads the row the answer needs anyway instead of a `search_fts` row and
 * then the node by its key (a 1,000-hit search: 1,087 buffers instead of 5,898). The name index on
 * `search_fts` had no other reader: dropped. SQLite keeps FTS5.
 */
export const searchNameTrgm = portable('20261127170000-search-name-trgm', ({ per }) => [
  per({ sqlite: '', postgres: 'CREATE INDEX nodes_name_trgm ON nodes USING gin (name gin_trgm_ops);\nDROP INDEX search_fts_name_trgm' }),
]);
