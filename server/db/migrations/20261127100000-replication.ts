import { sql } from 'kysely';
import { portable } from './kit';

/**
 * Replication (owner: replication): backup targets, path rules, the failure
 * log keyed by (storage, path, op), the single report row, the last audit and the last restore drill. A storage links
 * to a target through its existing `replica_target_id` column; deleting a
 * target unlinks through the catalogue, which owns `storages`.
 */
export const replication = portable('20261127100000-replication', ({ schema: s, int, serial }) => {
  /** A table of one row (id 1) holding the latest run of something. */
  const singleton = (name: string) =>
    s
      .createTable(name)
      .addColumn('id', int, (c) => c.primaryKey().check(sql`id = 1`))
      .addColumn('ran_at', 'text', (c) => c.notNull());
  return [
    s
      .createTable('replica_targets')
      .addColumn('id', int, serial)
      .addColumn('uid', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('driver', 'text', (c) => c.notNull())
      .addColumn('config', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('mode', 'text', (c) => c.notNull().defaultTo('async').check(sql`mode IN ('async', 'sync')`))
      .addColumn('enabled', int, (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull()),
    s
      .createTable('replica_rules')
      .addColumn('id', int, serial)
      .addColumn('path_pattern', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode IN ('mirror', 'append_only', 'skip')`))
      .addColumn('priority', int, (c) => c.notNull().defaultTo(100))
      .addColumn('enabled', int, (c) => c.notNull().defaultTo(1))
      .addColumn('description', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull()),
    s
      .createTable('replica_failures')
      .addColumn('id', int, serial)
      .addColumn('storage_id', int, (c) => c.notNull().references('storages.id').onDelete('cascade'))
      .addColumn('rel', 'text', (c) => c.notNull())
      .addColumn('op', 'text', (c) => c.notNull().check(sql`op IN ('write', 'delete', 'move', 'copy')`))
      .addColumn('to_rel', 'text')
      .addColumn('code', 'text', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('attempts', int, (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('resolved_at', 'text')
      .addUniqueConstraint('replica_failures_key', ['storage_id', 'rel', 'op']),
    s.createIndex('replica_failures_open').on('replica_failures').columns(['resolved_at', 'id']),
    singleton('replica_report')
      .addColumn('unresolved', int, (c) => c.notNull())
      .addColumn('repaired_24h', int, (c) => c.notNull())
      .addColumn('actionable', int, (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull()),
    singleton('replica_audit').addColumn('body', 'text', (c) => c.notNull()),
    singleton('replica_drill').addColumn('body', 'text', (c) => c.notNull()),
  ];
});
