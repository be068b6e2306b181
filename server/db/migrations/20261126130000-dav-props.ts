import type { Migration } from './types';

/**
 * WebDAV dead properties (owner: gateways), one row per property of a node,
 * keyed by storage id and path so a storage rename keeps them; `dir` lets a
 * PROPFIND of a folder read its children's properties with one query.
 */
export const davProps: Migration = {
  name: '20261126130000-dav-props',
  sql: `
CREATE TABLE dav_props (
  storage_id INTEGER NOT NULL REFERENCES storages(id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  dir TEXT NOT NULL,
  ns TEXT NOT NULL,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (storage_id, path, ns, name)
) WITHOUT ROWID;
CREATE INDEX dav_props_dir ON dav_props(storage_id, dir);`,
};
