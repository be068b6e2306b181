/** The AI assistant's wire shapes (spec: AI assistant; docs/assistant.md). */

export type AssistantStateName = 'off' | 'not_configured' | 'ready';
export type AssistantProviderName = 'anthropic' | 'openai' | 'ollama';

export interface AssistantLimits {
  max_steps: number;
  max_tokens: number;
  token_budget: number;
  timeout_ms: number;
  per_minute: number;
  retention_days: number;
  message_max: number;
}

/** `GET /api/files/assistant`. */
export interface AssistantState {
  state: AssistantStateName;
  permitted: boolean;
  button: boolean;
  provider: AssistantProviderName;
  model: string;
  retention_days: number;
  confirm_all: boolean;
  limits: AssistantLimits;
}

export interface AssistantConversationSummary {
  id: string;
  title: string;
  created_at: string;
  last_used_at: string;
}

export type AssistantStepStatus = 'done' | 'failed' | 'pending' | 'rejected' | 'undone';

export interface AssistantStepView {
  id: string;
  tool: string;
  input: Record<string, unknown>;
  status: AssistantStepStatus;
  /** An Undo is offered. */
  undo: boolean;
  created_at: string;
}

export type AssistantMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; text: string; tool_calls: Array<{ id: string; name: string; input: Record<string, unknown> }> }
  | { role: 'tool'; tool_call_id: string; name: string; content: string; is_error?: boolean };

/** `GET /api/files/assistant/conversations/{id}`. */
export interface AssistantConversation extends AssistantConversationSummary {
  messages: AssistantMessage[];
  steps: AssistantStepView[];
}

/** The chat and decide event streams, by event name. */
export interface AssistantStreamEvents {
  conversation: { id: string; title: string };
  text: { delta: string };
  step: { step_id: string | null; tool: string; input: Record<string, unknown>; status: 'done' | 'failed' | 'rejected'; result?: string; undo?: boolean };
  approval: { step_id: string; tool: string; input: Record<string, unknown>; reversible: boolean };
  done: { reason: 'end' | 'max_tokens' | 'max_steps' | 'budget' | 'approval'; conversation: { id: string; title: string } };
  error: { error: string; message: string; detail: Record<string, unknown> | null };
}

/** `GET/PATCH /api/admin/assistant` (the API key is never returned). */
export interface AssistantSettingsView {
  enabled: boolean;
  provider: AssistantProviderName;
  address: string;
  model: string;
  hide_button: boolean;
  limits: AssistantLimits;
  api_key_set: boolean;
  configured: boolean;
}
