/**
 * OpenAI Chat Completions adapter (`POST {base}/chat/completions`, stream:
 * true, stream_options.include_usage) through the official SDK; it serves any
 * compatible server (vLLM, llama.cpp, LM Studio, Ollama's /v1, ...). Tool-call
 * deltas are assembled by their `index` (the id and name come in the first
 * piece, the arguments in many) and emitted once the choice's
 * `finish_reason` arrives; usage comes in its own chunk after that.
 */
import OpenAI from 'openai';
import { classify, malformed, providerError } from './errors';
import { sdkClientOptions, sdkProvider } from './sdk';
import { newCallId, parseToolInput, type StreamRequest } from './shared';
import type { ChatMessage, ChatProvider, ProviderEvent, ProviderSettings } from './types';

const P = 'openai';
const DEFAULT_BASE = 'https://api.openai.com/v1';

function mapError(e: unknown) {
  if (e instanceof OpenAI.APIConnectionTimeoutError) return providerError('assistant_timeout', P, e.message);
  if (e instanceof OpenAI.APIError) {
    const body = e.error as { message?: string } | undefined;
    return classify(P, e.status, body?.message ?? e.message, e.code ?? e.type);
  }
  if (e instanceof SyntaxError) return malformed(P, e.message);
  return providerError('assistant_provider', P, e instanceof Error ? e.message : String(e));
}

/**
 * The admin types a server's address; compatible servers document it with `/v1`
 * (`http://host:8000/v1`). An address with no path gets `/v1`, one with a path is kept.
 */
export function openaiBase(address: string): string {
  if (!address) return DEFAULT_BASE;
  let u: URL;
  try {
    u = new URL(address);
  } catch {
    return address; // the request then fails as assistant_provider, not the constructor
  }
  const path = u.pathname.replace(/\/+$/, '');
  return `${u.origin}${path || '/v1'}`;
}

const isOpenAI = (base: string): boolean => {
  try {
    return new URL(base).hostname === 'api.openai.com';
  } catch {
    return false;
  }
};

/** Neutral history to Chat Completions messages: tool results are `role: tool` messages. */
export function toOpenAIMessages(system: string, messages: ChatMessage[]): OpenAI.ChatCompletionMessageParam[] {
  const out: OpenAI.ChatCompletionMessageParam[] = system ? [{ role: 'system', content: system }] : [];
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    // The wire has no error flag for a tool result: the words say it.
    else if (m.role === 'tool') out.push({ role: 'tool', tool_call_id: m.tool_call_id, content: m.is_error ? `Error: ${m.content}` : m.content });
    else
      out.push({
        role: 'assistant',
        content: m.text || null,
        ...(m.tool_calls.length > 0
          ? { tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.input) } })) }
          : {}),
      });
  }
  return out;
}

const STOP: Record<string, 'end' | 'tool_use' | 'max_tokens'> = {
  stop: 'end',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'end',
};

async function* turn(client: OpenAI, s: ProviderSettings, req: StreamRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
  // OpenAI's own newer models refuse `max_tokens`; many compatible servers know only it.
  const limit = isOpenAI(client.baseURL) ? { max_completion_tokens: req.max_tokens } : { max_tokens: req.max_tokens };
  const stream = await client.chat.completions.create(
    {
      model: s.model,
      messages: toOpenAIMessages(req.system, req.messages),
      ...(req.tools.length > 0
        ? { tools: req.tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.input_schema } })) }
        : {}),
      ...limit,
      stream: true,
      stream_options: { include_usage: true },
    },
    { signal },
  );
  const calls = new Map<number, { id: string; name: string; args: string }>();
  let finish: string | null = null;
  let usage: { input_tokens: number; output_tokens: number } | undefined;
  for await (const chunk of stream) {
    if (chunk.usage) usage = { input_tokens: chunk.usage.prompt_tokens, output_tokens: chunk.usage.completion_tokens };
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = choice.delta ?? {};
    if (delta.content) yield { type: 'text', text: delta.content };
    for (const tc of delta.tool_calls ?? []) {
      let c = calls.get(tc.index);
      if (!c) calls.set(tc.index, (c = { id: '', name: '', args: '' }));
      if (tc.id && !c.id) c.id = tc.id;
      // Some servers repeat the name in every piece: it is taken once.
      if (tc.function?.name && !c.name) c.name = tc.function.name;
      c.args += tc.function?.arguments ?? '';
    }
    if (choice.finish_reason && finish === null) {
      finish = choice.finish_reason;
      for (const i of [...calls.keys()].sort((a, b) => a - b)) {
        const c = calls.get(i)!;
        if (!c.name) throw malformed(P, `tool call ${i} has no name`);
        yield { type: 'tool_call', call: { id: c.id || newCallId(), name: c.name, input: parseToolInput(P, c.name, c.args) } };
      }
    }
  }
  if (signal.aborted) return; // boundStream reports the timeout or the cancel
  if (finish === null) throw malformed(P, 'the stream ended without a finish_reason');
  // A server that ignores include_usage sends none: nothing is reported rather than a made-up zero.
  if (usage) yield { type: 'usage', ...usage };
  // Some servers say "stop" after tool calls.
  yield { type: 'stop', reason: calls.size > 0 ? 'tool_use' : (STOP[finish] ?? 'end') };
}

export function openaiProvider(s: ProviderSettings): ChatProvider {
  const client = new OpenAI(sdkClientOptions(s, openaiBase(s.address)));
  return sdkProvider(s, {
    provider: P,
    mapError,
    models: (sig) => client.models.list({ signal: sig }),
    turn: (req, sig) => turn(client, s, req, sig),
  });
}
