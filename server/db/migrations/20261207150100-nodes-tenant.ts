import { portable } from './kit';

/**
 * Multi-tenant mode, step 1 (docs/tenants.md, "The nodes"): `nodes`, `node_removals` and `text_extracts` are
 * scoped, and a row carries its storage's tenant. Until now every row kept the column's default (tenant 1)
 * whatever its storage's tenant: each takes its storage's (an extract its node's). Single-tenant mode changes
 * no row. SQLite's `nodes_search_keys`, the covering index a content search looks its hits up in, gains
 * `tenant_id` after `storage_id`, so the hits' tenant is read from it and not from the table. PostgreSQL
 * answers a folder's count and the listing probe's `EXISTS` from `nodes_live_listing` alone (an index-only
 * scan): with `tenant_id = ?` added they read every row of the folder from the table (212 buffers against 12 for
 * a 1,000-entry folder), so the index carries the tenant (`INCLUDE`) and stays index-only. SQLite's listing
 * plans read the row already (its partial index's `deleted_at`), so its index is unchanged.
 */
export const nodesTenant = portable('20261207150100-nodes-tenant', ({ per }) => [
  'UPDATE nodes SET tenant_id = s.tenant_id FROM storages s WHERE s.id = nodes.storage_id AND nodes.tenant_id <> s.tenant_id',
  'UPDATE node_removals SET tenant_id = s.tenant_id FROM storages s WHERE s.id = node_removals.storage_id AND node_removals.tenant_id <> s.tenant_id',
  'UPDATE text_extracts SET tenant_id = n.tenant_id FROM nodes n WHERE n.id = text_extracts.node_id AND text_extracts.tenant_id <> n.tenant_id',
  per({
    sqlite: `DROP INDEX nodes_search_keys;
CREATE INDEX nodes_search_keys ON nodes (id, storage_id, tenant_id, type, sort_key, path, deleted_at) WHERE deleted_at IS NULL`,
    postgres: `DROP INDEX nodes_live_listing;
CREATE INDEX nodes_live_listing ON nodes (storage_id, dir, type, sort_key) INCLUDE (tenant_id) WHERE deleted_at IS NULL`,
  }),
]);
