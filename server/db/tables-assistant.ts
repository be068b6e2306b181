/** Row types of the assistant's tables (owner: assistant), apart from tables.ts to keep it short. */
import type { TenantRow } from './tenant-tables';

/** assistant: one conversation of a person; `messages` is the model history (JSON). */
export interface AssistantConversationsTable extends TenantRow {
  id: string;
  user_id: number;
  title: string;
  messages: string;
  created_at: string;
  last_used_at: string;
}
/** assistant: one tool step of a conversation: its undo plan, or the approval it waits for. */
export interface AssistantStepsTable extends TenantRow {
  id: string;
  conversation_id: string;
  tool_call_id: string;
  tool: string;
  input: string;
  status: 'done' | 'failed' | 'pending' | 'rejected' | 'undone';
  undo: string | null;
  result: string | null;
  created_at: string;
}
/** assistant: a person's choice to approve every change. */
export interface AssistantPrefsTable extends TenantRow {
  user_id: number;
  confirm_all: number;
}
