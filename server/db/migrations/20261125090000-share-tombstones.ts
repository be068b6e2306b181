import { portable } from './kit';

/**
 * `share_tombstones` (owner: shares): the tokens of links and file requests
 * whose storage was deleted. Deleting a storage cascades its `shares` rows
 * away, but the spec keeps such a link `revoked` (410), not unknown (404): the
 * trigger keeps each token before the cascade, in the same statement, so no
 * deletion path can forget it. Swept with the revoked links (7 days).
 */
export const shareTombstones = portable('20261125090000-share-tombstones', ({ schema: s, per }) => [
  s
    .createTable('share_tombstones')
    .addColumn('token', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull()),
  per({
    sqlite: `CREATE TRIGGER share_tombstones_storage_gone BEFORE DELETE ON storages
BEGIN
  INSERT OR REPLACE INTO share_tombstones (token, kind, reason, created_at)
    SELECT token, kind, 'storage_removed', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM shares WHERE storage_id = OLD.id;
END`,
    postgres: `CREATE FUNCTION share_tombstones_storage_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO share_tombstones (token, kind, reason, created_at)
    SELECT token, kind, 'storage_removed', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    FROM shares WHERE storage_id = OLD.id
  ON CONFLICT (token) DO UPDATE SET kind = excluded.kind, reason = excluded.reason, created_at = excluded.created_at;
  RETURN OLD;
END $$;
CREATE TRIGGER share_tombstones_storage_gone BEFORE DELETE ON storages FOR EACH ROW EXECUTE FUNCTION share_tombstones_storage_gone()`,
  }),
]);
