/** The assistant's tables (conversations, steps, prefs): the only writer of them. */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db';
import type { AssistantConversationsTable, AssistantStepsTable } from '../db/tables';
import type { ChatMessage } from './providers/types';
import type { UndoPlan } from './tools';

export type ConversationRow = AssistantConversationsTable;
export type StepRow = AssistantStepsTable;

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const now = () => new Date().toISOString();

export class ConversationsRepo {
  constructor(private db: Db) {}

  /** Starts a conversation of `userId` with no messages; the stored row. */
  async create(userId: number, title: string): Promise<ConversationRow> {
    const t = now();
    const row: ConversationRow = { id: newId('conv'), user_id: userId, title, messages: '[]', created_at: t, last_used_at: t };
    await this.db.async.run(this.db.k.insertInto('assistant_conversations').values(row));
    return row;
  }

  /** One conversation of this person (another person's reads as missing). */
  get(userId: number, id: string): Promise<ConversationRow | undefined> {
    return this.db.async.first(this.db.k.selectFrom('assistant_conversations').selectAll().where('id', '=', id).where('user_id', '=', userId));
  }

  /** This person's conversations without their messages, last used first (at most 500). */
  list(userId: number): Promise<Array<Omit<ConversationRow, 'messages'>>> {
    return this.db.async.all(
      this.db.k
        .selectFrom('assistant_conversations')
        .select(['id', 'user_id', 'title', 'created_at', 'last_used_at'])
        .where('user_id', '=', userId)
        .orderBy('last_used_at', 'desc')
        .limit(500),
    );
  }

  /** Replaces the history (the whole of it: the last writer's history stands) and marks the conversation used. */
  async saveMessages(id: string, messages: ChatMessage[]): Promise<void> {
    await this.db.async.run(
      this.db.k
        .updateTable('assistant_conversations')
        .set({ messages: JSON.stringify(messages), last_used_at: now() })
        .where('id', '=', id),
    );
  }

  /** Deletes one conversation of this person, or all of them without `id`; how many went. */
  delete(userId: number, id?: string): Promise<number> {
    let q = this.db.k.deleteFrom('assistant_conversations').where('user_id', '=', userId);
    if (id) q = q.where('id', '=', id);
    return this.db.async.run(q);
  }

  /** Retention: deletes conversations unused for `days` days; how many went. */
  sweep(days: number, at = Date.now()): Promise<number> {
    return this.db.async.run(this.db.k.deleteFrom('assistant_conversations').where('last_used_at', '<', new Date(at - days * 86_400_000).toISOString()));
  }

  /** Records a tool step; the stored row. */
  async addStep(s: {
    conversation_id: string;
    tool_call_id: string;
    tool: string;
    input: unknown;
    status: StepRow['status'];
    undo?: UndoPlan;
    result?: string;
  }): Promise<StepRow> {
    const row: StepRow = {
      id: newId('step'),
      conversation_id: s.conversation_id,
      tool_call_id: s.tool_call_id,
      tool: s.tool,
      input: JSON.stringify(s.input),
      status: s.status,
      undo: s.undo ? JSON.stringify(s.undo) : null,
      result: s.result ?? null,
      created_at: now(),
    };
    await this.db.async.run(this.db.k.insertInto('assistant_steps').values(row));
    return row;
  }

  /** A step of the conversation, or undefined. */
  step(conversationId: string, id: string): Promise<StepRow | undefined> {
    return this.db.async.first(this.db.k.selectFrom('assistant_steps').selectAll().where('id', '=', id).where('conversation_id', '=', conversationId));
  }

  /** The step waiting for the person's approval, or undefined. */
  pending(conversationId: string): Promise<StepRow | undefined> {
    return this.db.async.first(
      this.db.k.selectFrom('assistant_steps').selectAll().where('conversation_id', '=', conversationId).where('status', '=', 'pending'),
    );
  }

  /** The conversation's steps, oldest first. */
  steps(conversationId: string): Promise<StepRow[]> {
    return this.db.async.all(this.db.k.selectFrom('assistant_steps').selectAll().where('conversation_id', '=', conversationId).orderBy('created_at'));
  }

  /**
   * Moves a step from `from` to `to`; false when another request got there first (decide or undo twice).
   * One conditional UPDATE: the status is checked on the row it writes, so of callers racing one wins.
   */
  async transition(id: string, from: StepRow['status'], to: StepRow['status'], patch: { undo?: UndoPlan | null; result?: string } = {}): Promise<boolean> {
    const set: Partial<StepRow> = { status: to };
    if (patch.undo !== undefined) set.undo = patch.undo ? JSON.stringify(patch.undo) : null;
    if (patch.result !== undefined) set.result = patch.result;
    return (await this.db.async.run(this.db.k.updateTable('assistant_steps').set(set).where('id', '=', id).where('status', '=', from))) === 1;
  }

  /** Whether this person asked to confirm every change (false when never set). */
  async confirmAll(userId: number): Promise<boolean> {
    return !!(await this.db.async.first(this.db.k.selectFrom('assistant_prefs').select('confirm_all').where('user_id', '=', userId)))?.confirm_all;
  }

  /** Sets the person's choice (one upsert). */
  async setConfirmAll(userId: number, on: boolean): Promise<void> {
    await this.db.async.run(
      this.db.k
        .insertInto('assistant_prefs')
        .values({ user_id: userId, confirm_all: on ? 1 : 0 })
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ confirm_all: on ? 1 : 0 })),
    );
  }
}
