/**
 * Anthropic Messages API adapter (`POST /v1/messages`, stream: true) through
 * the official SDK. The SSE events arrive parsed; this file assembles them:
 * text deltas pass straight through, each tool_use block's `input_json_delta`
 * pieces are joined and parsed once at its `content_block_stop`, and usage
 * (input from `message_start`, output from `message_delta`) is reported at
 * `message_stop`, together with the stop reason.
 */
import Anthropic from '@anthropic-ai/sdk';
import { classify, malformed, providerError } from './errors';
import { sdkClientOptions, sdkProvider } from './sdk';
import { isObject, newCallId, parseToolInput, type StreamRequest } from './shared';
import type { ChatMessage, ChatProvider, ProviderEvent, ProviderSettings } from './types';

const P = 'anthropic';

function mapError(e: unknown) {
  if (e instanceof Anthropic.APIConnectionTimeoutError) return providerError('assistant_timeout', P, e.message);
  if (e instanceof Anthropic.APIError && e.status !== undefined) {
    const body = e.error as { error?: { message?: string; type?: string } } | undefined;
    return classify(P, e.status, body?.error?.message ?? e.message, body?.error?.type);
  }
  // An `event: error` inside the stream (the SDK throws it with no status).
  if (e instanceof Anthropic.APIError) {
    const body = e.error as { error?: { message?: string; type?: string } } | undefined;
    return classify(P, undefined, body?.error?.message ?? e.message, body?.error?.type);
  }
  if (e instanceof SyntaxError) return malformed(P, e.message);
  return providerError('assistant_provider', P, e instanceof Error ? e.message : String(e));
}

/** The SDK adds `/v1/...` itself: an address typed with `/v1` loses it. */
export const anthropicBase = (address: string): string | undefined => (address ? address.replace(/\/+$/, '').replace(/\/v1$/, '') : undefined);

/** Neutral history to Messages turns: tool results become `tool_result` blocks of one user turn. */
export function toAnthropicMessages(messages: ChatMessage[]): Anthropic.MessageParam[] {
  const out: Anthropic.MessageParam[] = [];
  // Consecutive user-side entries (tool results, then maybe the person's next words) share one turn.
  const userBlocks = (): Anthropic.ContentBlockParam[] => {
    const last = out[out.length - 1];
    if (last?.role === 'user' && Array.isArray(last.content)) return last.content;
    const blocks: Anthropic.ContentBlockParam[] = [];
    out.push({ role: 'user', content: blocks });
    return blocks;
  };
  for (const m of messages) {
    if (m.role === 'user') userBlocks().push({ type: 'text', text: m.content });
    else if (m.role === 'tool')
      userBlocks().push({
        type: 'tool_result',
        tool_use_id: m.tool_call_id,
        content: m.content,
        ...(m.is_error ? { is_error: true } : {}),
      });
    else {
      const content: Anthropic.ContentBlockParam[] = [];
      if (m.text) content.push({ type: 'text', text: m.text });
      for (const c of m.tool_calls) content.push({ type: 'tool_use', id: c.id, name: c.name, input: c.input });
      if (content.length > 0) out.push({ role: 'assistant', content });
    }
  }
  return out;
}

const STOP: Record<string, 'end' | 'tool_use' | 'max_tokens'> = {
  end_turn: 'end',
  stop_sequence: 'end',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  model_context_window_exceeded: 'max_tokens',
};

async function* turn(client: Anthropic, model: string, req: StreamRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
  const stream = await client.messages.create(
    {
      model,
      max_tokens: req.max_tokens,
      ...(req.system ? { system: req.system } : {}),
      messages: toAnthropicMessages(req.messages),
      ...(req.tools.length > 0
        ? { tools: req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema as Anthropic.Tool.InputSchema })) }
        : {}),
      stream: true,
    },
    { signal },
  );
  // `start` is the input the block opened with: {} from Anthropic, the whole input from some compatible servers.
  const tools = new Map<number, { id: string; name: string; json: string; start: unknown }>();
  let input = 0;
  let output = 0;
  let stop: string | null = null;
  for await (const ev of stream) {
    switch (ev.type) {
      case 'message_start':
        input = ev.message.usage.input_tokens + (ev.message.usage.cache_read_input_tokens ?? 0) + (ev.message.usage.cache_creation_input_tokens ?? 0);
        output = ev.message.usage.output_tokens;
        break;
      case 'content_block_start':
        if (ev.content_block.type === 'tool_use')
          tools.set(ev.index, { id: ev.content_block.id || newCallId(), name: ev.content_block.name, json: '', start: ev.content_block.input });
        else if (ev.content_block.type === 'text' && ev.content_block.text) yield { type: 'text', text: ev.content_block.text };
        break;
      case 'content_block_delta':
        if (ev.delta.type === 'text_delta') {
          if (ev.delta.text) yield { type: 'text', text: ev.delta.text };
        } else if (ev.delta.type === 'input_json_delta') {
          const t = tools.get(ev.index);
          if (!t) throw malformed(P, `input_json_delta for block ${ev.index}, which is no tool_use`);
          t.json += ev.delta.partial_json;
        }
        break;
      case 'content_block_stop': {
        const t = tools.get(ev.index);
        if (t) {
          tools.delete(ev.index);
          const args = t.json.trim() === '' && isObject(t.start) ? t.start : parseToolInput(P, t.name, t.json);
          yield { type: 'tool_call', call: { id: t.id, name: t.name, input: args } };
        }
        break;
      }
      case 'message_delta':
        stop = ev.delta.stop_reason ?? stop;
        output = ev.usage.output_tokens ?? output;
        if (ev.usage.input_tokens != null) input = Math.max(input, ev.usage.input_tokens);
        break;
      case 'message_stop':
        yield { type: 'usage', input_tokens: input, output_tokens: output };
        yield { type: 'stop', reason: STOP[stop ?? ''] ?? 'end' };
        return;
    }
  }
  // The SDK also ends quietly when aborted; boundStream tells that apart from a cut stream.
  if (!signal.aborted) throw malformed(P, 'the stream ended before message_stop');
}

export function anthropicProvider(s: ProviderSettings): ChatProvider {
  const client = new Anthropic(sdkClientOptions(s, anthropicBase(s.address)));
  return sdkProvider(s, {
    provider: P,
    mapError,
    models: (sig) => client.models.list({ limit: 1000 }, { signal: sig }),
    turn: (req, sig) => turn(client, s.model, req, sig),
  });
}
