/** The assistant's routes (spec: AI assistant): JSON calls, and the chat/decide event streams. */
import { api, fetchSigned, toApiError, ApiError } from '../api/client';
import type { AssistantConversation, AssistantConversationSummary, AssistantState, AssistantStreamEvents } from '../../../server/contract';
import { readSse } from './sse';

const P = '/api/files/assistant';

export type { AssistantState, AssistantConversationSummary as ConversationSummary, AssistantConversation as Conversation } from '../../../server/contract';

/** One decoded event of a chat or decide stream: the event's name as `type`, beside its data. */
export type ChatEvent = { [K in keyof AssistantStreamEvents]: { type: K } & AssistantStreamEvents[K] }[keyof AssistantStreamEvents];

export const state = () => api<AssistantState>(P, { cache: 'no-cache' });
export const setConfirmAll = (confirm_all: boolean) => api<{ confirm_all: boolean }>(`${P}/prefs`, { method: 'PUT', body: { confirm_all } });
export const conversations = async () => (await api<{ conversations: AssistantConversationSummary[] }>(`${P}/conversations`)).conversations;
export const conversation = (id: string) => api<AssistantConversation>(`${P}/conversations/${encodeURIComponent(id)}`);
export const remove = (id?: string) => api(id ? `${P}/conversations/${encodeURIComponent(id)}` : `${P}/conversations`, { method: 'DELETE' });
export const undo = (id: string, step_id: string) =>
  api<{ ok: boolean; status: string }>(`${P}/conversations/${encodeURIComponent(id)}/undo`, { body: { step_id } });

/** POSTs and hands each event over as it arrives; a refusal before the stream starts rejects with ApiError. */
async function stream(path: string, body: unknown, onEvent: (e: ChatEvent) => void, signal: AbortSignal): Promise<void> {
  let res: Response;
  try {
    res = await fetchSigned(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal,
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, { error: 'network', message: '' }, null);
  }
  if (!res.ok) throw await toApiError(res);
  if (!res.body) return;
  await readSse(res.body, (e) => {
    try {
      onEvent({ type: e.event, ...(JSON.parse(e.data) as object) } as ChatEvent);
    } catch {
      // A frame that is not JSON is not ours to show.
    }
  });
}

export const chat = (b: { conversation_id?: string; message: string; paths?: string[] }, onEvent: (e: ChatEvent) => void, signal: AbortSignal) =>
  stream(`${P}/chat`, b, onEvent, signal);
export const decide = (id: string, approve: boolean, onEvent: (e: ChatEvent) => void, signal: AbortSignal) =>
  stream(`${P}/conversations/${encodeURIComponent(id)}/decide`, { approve }, onEvent, signal);
