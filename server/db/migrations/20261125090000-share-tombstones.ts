import type { Migration } from './types';

/**
 * `share_tombstones` (owner: shares): the tokens of links and file requests
 * whose storage was deleted. Deleting a storage cascades its `shares` rows
 * away, but the spec keeps such a link `revoked` (410), not unknown (404): the
 * trigger keeps each token before the cascade, in the same statement, so no
 * deletion path can forget it. Swept with the revoked links (7 days).
 */
export const shareTombstones: Migration = {
  name: '20261125090000-share-tombstones',
  sql: `
CREATE TABLE share_tombstones (
  token TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  reason TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TRIGGER share_tombstones_storage_gone BEFORE DELETE ON storages
BEGIN
  INSERT OR REPLACE INTO share_tombstones (token, kind, reason, created_at)
    SELECT token, kind, 'storage_removed', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM shares WHERE storage_id = OLD.id;
END;
`,
};
