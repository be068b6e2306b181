import { portable } from './kit';

/**
 * Multi-tenant mode, step 1 (docs/tenants.md): a link's tombstone, kept by the trigger when its storage is
 * deleted, carries the link's tenant, so a deleted storage's token answers `revoked` in that tenant only
 * (before, the column's default made every tombstone tenant 1's).
 */
export const shareTombstonesTenant = portable('20261207080100-share-tombstones-tenant', ({ per }) => [
  per({
    sqlite: `DROP TRIGGER share_tombstones_storage_gone;
CREATE TRIGGER share_tombstones_storage_gone BEFORE DELETE ON storages
BEGIN
  INSERT OR REPLACE INTO share_tombstones (tenant_id, token, kind, reason, created_at)
    SELECT tenant_id, token, kind, 'storage_removed', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM shares WHERE storage_id = OLD.id;
END`,
    postgres: `CREATE OR REPLACE FUNCTION share_tombstones_storage_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO share_tombstones (tenant_id, token, kind, reason, created_at)
    SELECT tenant_id, token, kind, 'storage_removed', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    FROM shares WHERE storage_id = OLD.id
  ON CONFLICT (token) DO UPDATE SET tenant_id = excluded.tenant_id, kind = excluded.kind, reason = excluded.reason, created_at = excluded.created_at;
  RETURN OLD;
END $$`,
  }),
]);
