/**
 * For assistant tests: a scripted in-process ChatProvider (each model turn a
 * function of the history, a hang until aborted, or a thrown provider
 * error) and a reader of the chat's server-sent events.
 */
import { AppError, type ErrorCode } from '../../server/errors';
import type { ChatMessage, ChatProvider, ProviderEvent, ProviderFactory, ToolCall } from '../../server/assistant/providers/types';

export type Turn = ((messages: ChatMessage[]) => ProviderEvent[]) | { hang: true } | { fail: ErrorCode };

export interface Script {
  turns: Turn[];
  /** The history the provider was given at each turn. */
  seen: ChatMessage[][];
  factory: ProviderFactory;
}

let n = 0;
export const call = (name: string, input: Record<string, unknown>): ToolCall => ({ id: `call_${++n}`, name, input });
export const calls = (...c: ToolCall[]): ProviderEvent[] => [
  ...c.map((x) => ({ type: 'tool_call' as const, call: x })),
  { type: 'usage', input_tokens: 100, output_tokens: 20 },
  { type: 'stop', reason: 'tool_use' },
];
export const say = (text: string): ProviderEvent[] => [
  ...text.split(/(?<= )/).map((t) => ({ type: 'text' as const, text: t })),
  { type: 'usage', input_tokens: 50, output_tokens: 5 },
  { type: 'stop', reason: 'end' },
];

export function scripted(): Script {
  const s: Script = {
    turns: [],
    seen: [],
    factory: () => provider,
  };
  const provider: ChatProvider = {
    async listModels() {
      return ['scripted-1'];
    },
    async *stream(req) {
      s.seen.push(structuredClone(req.messages));
      const turn = s.turns.shift() ?? ((): ProviderEvent[] => say('(no more script)'));
      if ('hang' in turn) {
        await new Promise<void>((resolve) => req.signal.addEventListener('abort', () => resolve(), { once: true }));
        throw new AppError('assistant_timeout');
      }
      if ('fail' in turn) throw new AppError(turn.fail);
      for (const ev of turn(req.messages)) yield ev;
    },
  };
  return s;
}

export interface SseEvent {
  event: string;
  data: any;
}

/** POSTs and reads the whole event stream (or the JSON error when the answer is not a stream). */
export async function postSse(url: string, token: string, body: unknown): Promise<{ status: number; events: SseEvent[]; json?: any }> {
  const r = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  if (!(r.headers.get('content-type') ?? '').startsWith('text/event-stream')) return { status: r.status, events: [], json: text ? JSON.parse(text) : null };
  const events = text
    .split('\n\n')
    .filter((b) => b.trim())
    .map((b) => {
      const event = /^event: (.*)$/m.exec(b)?.[1] ?? 'message';
      const data = /^data: (.*)$/m.exec(b)?.[1];
      return { event, data: data ? JSON.parse(data) : null };
    });
  return { status: r.status, events };
}

export const ofType = (events: SseEvent[], type: string) => events.filter((e) => e.event === type).map((e) => e.data);
