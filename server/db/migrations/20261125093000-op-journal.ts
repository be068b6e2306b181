import { portable } from './kit';

/**
 * What a long op has already committed (owner: jobs): a resumed op reads it
 * to skip finished work instead of tripping over its own partial output.
 * Rows go with their op.
 */
export const opJournal = portable('20261125093000-op-journal', ({ schema: s, withoutRowid }) => [
  withoutRowid(
    s
      .createTable('op_journal')
      .addColumn('op_id', 'text', (c) => c.notNull().references('ops.id').onDelete('cascade'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull().defaultTo(''))
      .addPrimaryKeyConstraint('op_journal_pk', ['op_id', 'key']),
  ),
]);
