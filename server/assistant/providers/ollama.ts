/**
 * Ollama adapter: `POST /api/chat` with `tools` and `stream: true`, read as
 * NDJSON with plain fetch. Not the `ollama` package, because (as of 0.6) its
 * stream parser drops a line that is not JSON with a console warning instead
 * of failing (a malformed stream must be an error), its listing takes no
 * AbortSignal, and its per-request abort exists only once the headers came
 * (a server that never answers could only be cut by aborting the whole client).
 * Ollama sends each tool call whole (arguments as an object) in one line.
 */
import { boundCall, boundStream, type Bound } from './deadline';
import { classify, malformed, providerError } from './errors';
import { lines } from './ndjson';
import { isObject, newCallId, type StreamRequest } from './shared';
import type { ChatMessage, ChatProvider, ProviderEvent, ProviderSettings } from './types';

const P = 'ollama';
const DEFAULT_HOST = 'http://127.0.0.1:11434';

function mapError(e: unknown) {
  return providerError('assistant_provider', P, e instanceof Error ? e.message : String(e));
}

/** `http://host:11434`, with a trailing `/` or `/api` forgiven. */
export const ollamaHost = (address: string): string => (address || DEFAULT_HOST).replace(/\/+$/, '').replace(/\/api$/, '');

type WireToolCall = { id?: string; function: { name: string; arguments: Record<string, unknown> | string } };
type WireLine = {
  error?: string;
  message?: { content?: string; tool_calls?: WireToolCall[] };
  done?: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
};

/** Neutral history to /api/chat messages: tool results are `role: tool` with the tool's name. */
export function toOllamaMessages(system: string, messages: ChatMessage[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = system ? [{ role: 'system', content: system }] : [];
  for (const m of messages) {
    if (m.role === 'user') out.push({ role: 'user', content: m.content });
    else if (m.role === 'tool')
      out.push({ role: 'tool', tool_name: m.name, tool_call_id: m.tool_call_id, content: m.is_error ? `Error: ${m.content}` : m.content });
    else
      out.push({
        role: 'assistant',
        content: m.text,
        ...(m.tool_calls.length > 0 ? { tool_calls: m.tool_calls.map((c) => ({ id: c.id, function: { name: c.name, arguments: c.input } })) } : {}),
      });
  }
  return out;
}

async function request(s: ProviderSettings, path: string, signal: AbortSignal, body?: unknown): Promise<Response> {
  const res = await fetch(`${ollamaHost(s.address)}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      'content-type': 'application/json',
      // Ollama itself needs none; ollama.com and authenticating proxies take a bearer key.
      ...(s.api_key ? { authorization: `Bearer ${s.api_key}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    let message = text || `HTTP ${res.status}`;
    try {
      message = (JSON.parse(text) as { error?: string }).error ?? message;
    } catch {
      // not JSON: the text itself
    }
    throw classify(P, res.status, message);
  }
  return res;
}

function toolInput(name: string, args: Record<string, unknown> | string): Record<string, unknown> {
  const v: unknown = typeof args === 'string' ? (args.trim() ? JSON.parse(args) : {}) : args;
  if (!isObject(v)) throw malformed(P, `arguments of tool call ${name} are not an object`);
  return v;
}

async function* turn(s: ProviderSettings, req: StreamRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
  const res = await request(s, '/api/chat', signal, {
    model: s.model,
    messages: toOllamaMessages(req.system, req.messages),
    ...(req.tools.length > 0
      ? { tools: req.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.input_schema } })) }
      : {}),
    stream: true,
    options: { num_predict: req.max_tokens },
  });
  if (!res.body) throw malformed(P, 'no body');
  let sawTools = false;
  for await (const line of lines(res.body as unknown as AsyncIterable<Uint8Array>)) {
    let msg: WireLine;
    try {
      msg = JSON.parse(line) as WireLine;
    } catch {
      throw malformed(P, `a line is not JSON: ${line.slice(0, 80)}`);
    }
    // An error after the 200 (the model failed mid-answer) comes as its own line.
    if (msg.error) throw classify(P, undefined, msg.error);
    if (msg.message?.content) yield { type: 'text', text: msg.message.content };
    for (const tc of msg.message?.tool_calls ?? []) {
      const name = tc.function?.name;
      if (!name) throw malformed(P, 'a tool call has no name');
      let input: Record<string, unknown>;
      try {
        input = toolInput(name, tc.function.arguments ?? {});
      } catch (e) {
        throw e instanceof SyntaxError ? malformed(P, `arguments of tool call ${name} are not JSON`) : e;
      }
      sawTools = true;
      yield { type: 'tool_call', call: { id: tc.id || newCallId(), name, input } };
    }
    if (msg.done) {
      yield { type: 'usage', input_tokens: msg.prompt_eval_count ?? 0, output_tokens: msg.eval_count ?? 0 };
      yield { type: 'stop', reason: sawTools ? 'tool_use' : msg.done_reason === 'length' ? 'max_tokens' : 'end' };
      return;
    }
  }
  if (!signal.aborted) throw malformed(P, 'the stream ended before done');
}

export function ollamaProvider(s: ProviderSettings): ChatProvider {
  const bound = (signal?: AbortSignal): Bound => ({ provider: P, timeoutMs: s.timeout_ms, signal, mapError });
  return {
    listModels: (signal) =>
      boundCall(bound(signal), async (sig) => {
        const res = await request(s, '/api/tags', sig);
        let body: { models?: { name?: string; model?: string }[] };
        try {
          body = (await res.json()) as typeof body;
        } catch {
          throw malformed(P, '/api/tags is not JSON');
        }
        return (body.models ?? []).map((m) => m.name ?? m.model ?? '').filter(Boolean);
      }),
    stream: (req) => boundStream(bound(req.signal), (sig) => turn(s, req, sig)),
  };
}
