import { sql } from 'kysely';
import { portable } from './kit';

/**
 * The AI assistant (owner: assistant): conversations per person (the model
 * history as JSON, swept after the retention days from `last_used_at`), the
 * tool steps of each (undo plans, approvals waiting), and each person's
 * `confirm_all` choice.
 */
export const assistant = portable('20261127120000-assistant', ({ schema: s, int }) => [
  s
    .createTable('assistant_conversations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', int, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('messages', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text', (c) => c.notNull()),
  s.createIndex('assistant_conversations_user').on('assistant_conversations').columns(['user_id', 'last_used_at']),
  s
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
  s.createIndex('assistant_steps_conversation').on('assistant_steps').column('conversation_id'),
  s
    .createTable('assistant_prefs')
    .addColumn('user_id', int, (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('confirm_all', int, (c) => c.notNull().defaultTo(0)),
]);
