import { portable } from './kit';

/**
 * Request meter (owner: catalogue): requests per metered storage and UTC day
 * by class (flushed in batches, added to, never rewritten), and each storage's
 * daily budget of LIST+HEAD+GET requests (no row or 0 = unlimited).
 */
export const meter = portable('20261127110000-meter', ({ schema: s, int }) => [
  s
    .createTable('storage_requests')
    .addColumn('storage_id', int, (c) => c.notNull().references('storages.id').onDelete('cascade'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('list', int, (c) => c.notNull().defaultTo(0))
    .addColumn('head', int, (c) => c.notNull().defaultTo(0))
    .addColumn('get', int, (c) => c.notNull().defaultTo(0))
    .addColumn('put', int, (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('storage_requests_pk', ['storage_id', 'day']),
  s
    .createTable('storage_budgets')
    .addColumn('storage_id', int, (c) => c.primaryKey().references('storages.id').onDelete('cascade'))
    .addColumn('requests_per_day', int, (c) => c.notNull().defaultTo(0)),
]);
