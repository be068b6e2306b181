/**
 * The provider interface shared by the assistant's chat engine and the three
 * adapters (anthropic, openai, ollama). Each adapter converts this neutral
 * history to its wire format and its stream back into ProviderEvents.
 */
export type ToolDef = { name: string; description: string; input_schema: Record<string, unknown> }; // JSON Schema object
export type ToolCall = { id: string; name: string; input: Record<string, unknown> };
export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; text: string; tool_calls: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; name: string; content: string; is_error?: boolean };
export type ProviderEvent =
  | { type: 'text'; text: string } // a streamed text delta
  | { type: 'tool_call'; call: ToolCall } // emitted once the call's arguments are complete
  | { type: 'usage'; input_tokens: number; output_tokens: number }
  | { type: 'stop'; reason: 'end' | 'tool_use' | 'max_tokens' };
export interface ProviderSettings {
  provider: 'anthropic' | 'openai' | 'ollama';
  address: string /* '' = provider default */;
  api_key: string;
  model: string;
  timeout_ms: number;
}
export interface ChatProvider {
  listModels(signal?: AbortSignal): Promise<string[]>;
  /** Streams one model turn. Throws AppError with code assistant_provider | assistant_provider_key | assistant_no_tools | assistant_timeout | assistant_too_long (see server/errors for AppError and the spec's Errors table for statuses). */
  stream(req: { system: string; messages: ChatMessage[]; tools: ToolDef[]; max_tokens: number; signal: AbortSignal }): AsyncIterable<ProviderEvent>;
}
export type ProviderFactory = (s: ProviderSettings) => ChatProvider;
