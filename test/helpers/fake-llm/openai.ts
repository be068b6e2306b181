/**
 * A fake OpenAI Chat Completions server: `POST /v1/chat/completions` with
 * `stream: true` answers `data: {chat.completion.chunk}` lines: a first chunk
 * with the role, content deltas, tool-call deltas by `index` (id, type and
 * name in the first piece, the arguments cut in several), a chunk with the
 * finish_reason, the usage chunk (`choices: []`) only when the request asked
 * `stream_options.include_usage`, then `data: [DONE]`. `GET /v1/models`
 * lists models. Error bodies are `{error: {message, type, param, code}}`.
 */
import { cut, startFake, type Dialect, type Frame, type Turn } from './script';

const ERRORS = {
  unauthorized: {
    status: 401,
    error: {
      message: 'Incorrect API key provided: sk-fake***************1234. You can find your API key at https://platform.openai.com/account/api-keys.',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    },
  },
  // What Ollama's OpenAI-compatible endpoint answers for a model whose template has no tools.
  no_tools: { status: 400, error: { message: 'registry.ollama.ai/library/gemma3:4b does not support tools', type: 'api_error', param: null, code: null } },
  too_long: {
    status: 400,
    error: {
      message:
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.",
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  },
  server: {
    status: 500,
    error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null },
  },
} as const;

export const openaiDialect: Dialect = {
  chatPath: '/v1/chat/completions',
  modelsPath: '/v1/models',
  contentType: 'text/event-stream; charset=utf-8',
  frames(turn, req) {
    const model = String(req.model ?? 'gpt-fake');
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: Record<string, unknown>, finish: string | null = null, token = false): Frame => ({
      data: `data: ${JSON.stringify({ id: 'chatcmpl-Fake123', object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_fake', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`,
      token,
    });
    const text = turn.text ?? [];
    const calls = turn.tool_calls ?? [];
    const out: Frame[] = [chunk({ role: 'assistant', content: text.length > 0 ? '' : null, refusal: null })];
    for (const t of text) out.push(chunk({ content: t }, null, true));
    calls.forEach((c, i) => {
      const id = c.id ?? `call_Fake${String(i).padStart(20, '0')}`;
      out.push(chunk({ tool_calls: [{ index: i, id, type: 'function', function: { name: c.name, arguments: '' } }] }));
      for (const p of cut(JSON.stringify(c.input), c.pieces ?? 3)) out.push(chunk({ tool_calls: [{ index: i, function: { arguments: p } }] }));
    });
    const finish = { end: 'stop', tool_use: 'tool_calls', max_tokens: 'length' }[turn.stop ?? (calls.length > 0 ? 'tool_use' : 'end')];
    out.push(chunk({}, finish));
    const opts = req.stream_options as { include_usage?: boolean } | undefined;
    if (opts?.include_usage) {
      const u = { prompt_tokens: turn.usage?.input ?? 25, completion_tokens: turn.usage?.output ?? 15 };
      out.push({
        data: `data: ${JSON.stringify({ id: 'chatcmpl-Fake123', object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_fake', choices: [], usage: { ...u, total_tokens: u.prompt_tokens + u.completion_tokens } })}\n\n`,
      });
    }
    out.push({ data: 'data: [DONE]\n\n' });
    return out;
  },
  broken: () => 'data: {"id":"chatcmpl-Fake123","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"x\n\n',
  error(kind) {
    const e = ERRORS[kind];
    return { status: e.status, body: { error: e.error } };
  },
  // OpenAI itself fails before the stream; compatible servers (vLLM, LiteLLM) send this line.
  streamError: (kind) => `data: ${JSON.stringify({ error: ERRORS[kind].error })}\n\n`,
  models: (names) => ({ object: 'list', data: names.map((id) => ({ id, object: 'model', created: 1715367049, owned_by: 'system' })) }),
};

export const startFakeOpenAI = (opts?: { models?: string[]; turns?: Turn[] }) => startFake(openaiDialect, opts);
