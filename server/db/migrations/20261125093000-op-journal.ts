import type { Migration } from './types';

/**
 * What a long op has already committed (owner: jobs): a resumed op reads it
 * to skip finished work instead of tripping over its own partial output.
 * Rows go with their op.
 */
export const opJournal: Migration = {
  name: '20261125093000-op-journal',
  sql: `
CREATE TABLE op_journal (
  op_id TEXT NOT NULL REFERENCES ops(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (op_id, key)
) WITHOUT ROWID;`,
};
