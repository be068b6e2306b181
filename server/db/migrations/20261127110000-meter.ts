import type { Migration } from './types';

/**
 * Request meter (owner: catalogue): requests per metered storage and UTC day
 * by class (flushed in batches, added to, never rewritten), and each storage's
 * daily budget of LIST+HEAD+GET requests (no row or 0 = unlimited).
 */
export const meter: Migration = {
  name: '20261127110000-meter',
  sql: `
CREATE TABLE storage_requests (
  storage_id INTEGER NOT NULL REFERENCES storages(id) ON DELETE CASCADE,
  day TEXT NOT NULL,
  list INTEGER NOT NULL DEFAULT 0,
  head INTEGER NOT NULL DEFAULT 0,
  get INTEGER NOT NULL DEFAULT 0,
  put INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (storage_id, day)
);
CREATE TABLE storage_budgets (
  storage_id INTEGER PRIMARY KEY REFERENCES storages(id) ON DELETE CASCADE,
  requests_per_day INTEGER NOT NULL DEFAULT 0
);`,
};
