/**
 * A fake Anthropic Messages API: `POST /v1/messages` streams the SSE events
 * `message_start`, `content_block_start`, `ping`, `content_block_delta`
 * (`text_delta`, `input_json_delta` cut in several pieces after the empty
 * first one the real API sends), `content_block_stop`, `message_delta`
 * (stop_reason, usage) and `message_stop`; `GET /v1/models` lists models.
 * Error bodies are `{type: "error", error: {type, message}, request_id}`.
 */
import { cut, startFake, type Dialect, type Frame, type Turn } from './script';

const sse = (event: string, data: unknown, token = false): Frame => ({ data: `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`, token });

const ERRORS = {
  unauthorized: { status: 401, type: 'authentication_error', message: 'invalid x-api-key' },
  // Anthropic's own models all take tools; this is a compatible server's refusal in Anthropic's error shape.
  no_tools: { status: 400, type: 'invalid_request_error', message: 'registry.ollama.ai/library/gemma3:1b does not support tools' },
  too_long: { status: 400, type: 'invalid_request_error', message: 'prompt is too long: 208656 tokens > 200000 maximum' },
  server: { status: 529, type: 'overloaded_error', message: 'Overloaded' },
} as const;

export const anthropicDialect: Dialect = {
  chatPath: '/v1/messages',
  modelsPath: '/v1/models',
  contentType: 'text/event-stream; charset=utf-8',
  frames(turn, req) {
    const text = turn.text ?? [];
    const calls = turn.tool_calls ?? [];
    const model = String(req.model ?? 'claude-fake');
    const out: Frame[] = [
      sse('message_start', {
        type: 'message_start',
        message: {
          id: 'msg_01FakeFakeFakeFakeFake',
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: turn.usage?.input ?? 25, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
        },
      }),
    ];
    let index = 0;
    if (text.length > 0) {
      out.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
      out.push(sse('ping', { type: 'ping' }));
      for (const t of text) out.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } }, true));
      out.push(sse('content_block_stop', { type: 'content_block_stop', index }));
      index++;
    }
    calls.forEach((c, i) => {
      const id = c.id ?? `toolu_01Fake${String(i).padStart(18, '0')}`;
      out.push(sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name: c.name, input: {} } }));
      out.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } }));
      for (const p of cut(JSON.stringify(c.input), c.pieces ?? 3))
        out.push(sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: p } }));
      out.push(sse('content_block_stop', { type: 'content_block_stop', index }));
      index++;
    });
    const stop = { end: 'end_turn', tool_use: 'tool_use', max_tokens: 'max_tokens' }[turn.stop ?? (calls.length > 0 ? 'tool_use' : 'end')];
    out.push(
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: turn.usage?.output ?? 15 } }),
    );
    out.push(sse('message_stop', { type: 'message_stop' }));
    return out;
  },
  broken: () => 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_del\n\n',
  error(kind) {
    const e = ERRORS[kind];
    return { status: e.status, body: { type: 'error', error: { type: e.type, message: e.message }, request_id: 'req_011CFakeFakeFake' } };
  },
  streamError(kind) {
    const e = ERRORS[kind];
    return `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: e.type, message: e.message } })}\n\n`;
  },
  models: (names) => ({
    data: names.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-05-14T00:00:00Z' })),
    has_more: false,
    first_id: names[0] ?? null,
    last_id: names[names.length - 1] ?? null,
  }),
};

export const startFakeAnthropic = (opts?: { models?: string[]; turns?: Turn[] }) => startFake(anthropicDialect, opts);
