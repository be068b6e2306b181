/**
 * The assistant's tables (conversations, steps, prefs): the only writer of them. Every row is its person's
 * tenant's (docs/tenants.md): a conversation and a preference are found only in the scope given, a step
 * carries its conversation's tenant and is found through the conversation (a `ConversationRef`).
 */
import { randomBytes } from 'node:crypto';
import type { Db, TenantScope } from '../db';
import type { AssistantConversationsTable, AssistantStepsTable } from '../db/tables';
import type { ChatMessage } from './providers/types';
import type { UndoPlan } from './tools';

export type ConversationRow = AssistantConversationsTable;
export type StepRow = AssistantStepsTable;
/** A conversation as its steps' statements name it: its id and its tenant (a `ConversationRow` is one). */
export type ConversationRef = Pick<ConversationRow, 'id' | 'tenant_id'>;

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const now = () => new Date().toISOString();

export class ConversationsRepo {
  constructor(private db: Db) {}

  /** Starts a conversation of `userId` (a person of tenant `s`) with no messages; the stored row. */
  async create(s: TenantScope, userId: number, title: string): Promise<ConversationRow> {
    const t = now();
    const row = { id: newId('conv'), user_id: userId, title, messages: '[]', created_at: t, last_used_at: t };
    await this.db.async.run(this.db.k.insertInto('assistant_conversations').values({ ...row, tenant_id: s.tenant_id }));
    return { ...row, tenant_id: s.tenant_id };
  }

  /** One conversation of this person (another person's or another tenant's reads as missing). */
  get(s: TenantScope, userId: number, id: string): Promise<ConversationRow | undefined> {
    return this.db.async.first(
      this.db.k.selectFrom('assistant_conversations').selectAll().where('tenant_id', '=', s.tenant_id).where('id', '=', id).where('user_id', '=', userId),
    );
  }

  /** This person's conversations without their messages, last used first (at most 500). */
  list(s: TenantScope, userId: number): Promise<Array<Omit<ConversationRow, 'messages' | 'tenant_id'>>> {
    return this.db.async.all(
      this.db.k
        .selectFrom('assistant_conversations')
        .select(['id', 'user_id', 'title', 'created_at', 'last_used_at'])
        .where('tenant_id', '=', s.tenant_id)
        .where('user_id', '=', userId)
        .orderBy('last_used_at', 'desc')
        .limit(500),
    );
  }

  /** Replaces the history (the whole of it: the last writer's history stands) and marks the conversation used. */
  async saveMessages(c: ConversationRef, messages: ChatMessage[]): Promise<void> {
    await this.db.async.run(
      this.db.k
        .updateTable('assistant_conversations')
        .set({ messages: JSON.stringify(messages), last_used_at: now() })
        .where('tenant_id', '=', c.tenant_id)
        .where('id', '=', c.id),
    );
  }

  /** Deletes one conversation of this person, or all of them without `id`; how many went. */
  delete(s: TenantScope, userId: number, id?: string): Promise<number> {
    let q = this.db.k.deleteFrom('assistant_conversations').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId);
    if (id) q = q.where('id', '=', id);
    return this.db.async.run(q);
  }

  /** Retention: deletes the tenant's conversations unused for `days` days; how many went. */
  sweep(s: TenantScope, days: number, at = Date.now()): Promise<number> {
    return this.db.async.run(
      this.db.k
        .deleteFrom('assistant_conversations')
        .where('tenant_id', '=', s.tenant_id)
        .where('last_used_at', '<', new Date(at - days * 86_400_000).toISOString()),
    );
  }

  /** Records a tool step of the conversation, in its tenant; the stored row. */
  async addStep(
    c: ConversationRef,
    s: {
      tool_call_id: string;
      tool: string;
      input: unknown;
      status: StepRow['status'];
      undo?: UndoPlan;
      result?: string;
    },
  ): Promise<StepRow> {
    const row: Omit<StepRow, 'tenant_id'> = {
      id: newId('step'),
      conversation_id: c.id,
      tool_call_id: s.tool_call_id,
      tool: s.tool,
      input: JSON.stringify(s.input),
      status: s.status,
      undo: s.undo ? JSON.stringify(s.undo) : null,
      result: s.result ?? null,
      created_at: now(),
    };
    await this.db.async.run(this.db.k.insertInto('assistant_steps').values({ ...row, tenant_id: c.tenant_id }));
    return { ...row, tenant_id: c.tenant_id };
  }

  /** A step of the conversation, or undefined. */
  step(c: ConversationRef, id: string): Promise<StepRow | undefined> {
    return this.db.async.first(this.stepsOf(c).where('id', '=', id));
  }

  /** The step waiting for the person's approval, or undefined. */
  pending(c: ConversationRef): Promise<StepRow | undefined> {
    return this.db.async.first(this.stepsOf(c).where('status', '=', 'pending'));
  }

  /** The conversation's steps, oldest first. */
  steps(c: ConversationRef): Promise<StepRow[]> {
    return this.db.async.all(this.stepsOf(c).orderBy('created_at'));
  }

  private stepsOf(c: ConversationRef) {
    return this.db.k.selectFrom('assistant_steps').selectAll().where('tenant_id', '=', c.tenant_id).where('conversation_id', '=', c.id);
  }

  /**
   * Moves a step from `from` to `to`; false when another request got there first (decide or undo twice).
   * One conditional UPDATE: the status is checked on the row it writes, so of callers racing one wins.
   */
  async transition(
    step: Pick<StepRow, 'id' | 'tenant_id'>,
    from: StepRow['status'],
    to: StepRow['status'],
    patch: { undo?: UndoPlan | null; result?: string } = {},
  ): Promise<boolean> {
    const set: Partial<StepRow> = { status: to };
    if (patch.undo !== undefined) set.undo = patch.undo ? JSON.stringify(patch.undo) : null;
    if (patch.result !== undefined) set.result = patch.result;
    const q = this.db.k.updateTable('assistant_steps').set(set).where('tenant_id', '=', step.tenant_id).where('id', '=', step.id).where('status', '=', from);
    return (await this.db.async.run(q)) === 1;
  }

  /** Whether this person asked to confirm every change (false when never set, or set in another tenant). */
  async confirmAll(s: TenantScope, userId: number): Promise<boolean> {
    return !!(
      await this.db.async.first(
        this.db.k.selectFrom('assistant_prefs').select('confirm_all').where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId),
      )
    )?.confirm_all;
  }

  /** Sets the person's choice (one upsert; a row of the same user id in another tenant is left as it is). */
  async setConfirmAll(s: TenantScope, userId: number, on: boolean): Promise<void> {
    await this.db.async.run(
      this.db.k
        .insertInto('assistant_prefs')
        .values({ tenant_id: s.tenant_id, user_id: userId, confirm_all: on ? 1 : 0 })
        .onConflict((oc) =>
          oc
            .column('user_id')
            .doUpdateSet({ confirm_all: on ? 1 : 0 })
            .where('assistant_prefs.tenant_id', '=', s.tenant_id),
        ),
    );
  }
}
