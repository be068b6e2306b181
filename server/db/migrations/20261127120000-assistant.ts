import { DummyDriver, Kysely, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql } from 'kysely';
import type { Migration } from './types';

// Built with Kysely's schema builder (compiled only: migrations are applied as SQL text at boot).
const k = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

/**
 * The AI assistant (owner: assistant): conversations per person (the model
 * history as JSON, swept after the retention days from `last_used_at`), the
 * tool steps of each (undo plans, approvals waiting), and each person's
 * `confirm_all` choice.
 */
export const assistant: Migration = {
  name: '20261127120000-assistant',
  sql: [
    k.schema
      .createTable('assistant_conversations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('messages', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text', (c) => c.notNull()),
    k.schema.createIndex('assistant_conversations_user').on('assistant_conversations').columns(['user_id', 'last_used_at']),
    k.schema
      .createTable('assistant_steps')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('conversation_id', 'text', (c) => c.notNull().references('assistant_conversations.id').onDelete('cascade'))
      .addColumn('tool_call_id', 'text', (c) => c.notNull())
      .addColumn('tool', 'text', (c) => c.notNull())
      .addColumn('input', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull().check(sql`status IN ('done', 'failed', 'pending', 'rejected', 'undone')`))
      .addColumn('undo', 'text')
      .addColumn('result', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull()),
    k.schema.createIndex('assistant_steps_conversation').on('assistant_steps').column('conversation_id'),
    k.schema
      .createTable('assistant_prefs')
      .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
      .addColumn('confirm_all', 'integer', (c) => c.notNull().defaultTo(0)),
  ]
    .map((q) => q.compile().sql)
    .join(';\n'),
};
