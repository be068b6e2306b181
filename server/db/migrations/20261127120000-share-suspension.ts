import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { Migration } from './types';

/**
 * Share suspension (owner: shares): a link the uplink guard suspended on an
 * anomaly (too many distinct addresses, a download accelerator) keeps when and
 * why until its owner or an admin re-enables it. Built with Kysely's schema
 * builder (compiled only, never run by it) so the SQL stays portable.
 */
const schema = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
}).schema;

export const shareSuspension: Migration = {
  name: '20261127120000-share-suspension',
  sql: [
    schema.alterTable('shares').addColumn('suspended_at', 'text').compile().sql,
    schema.alterTable('shares').addColumn('suspended_reason', 'text').compile().sql,
  ].join(';\n') + ';\n',
};
