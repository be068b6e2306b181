/**
 * A fake Ollama: `POST /api/chat` with `stream: true` answers NDJSON, one
 * `{model, created_at, message: {role, content}, done: false}` line per text
 * chunk, one line per tool call (Ollama sends each call whole, arguments as
 * an object, with an id and index in current versions), and a last line with
 * `done: true`, `done_reason` and the counts (`prompt_eval_count`,
 * `eval_count`). `GET /api/tags` lists models. Errors are `{error: "..."}`.
 */
import { startFake, type Dialect, type Frame, type Turn } from './script';

const ERRORS = {
  unauthorized: { status: 401, error: 'unauthorized' },
  no_tools: { status: 400, error: 'registry.ollama.ai/library/gemma3:1b does not support tools' },
  too_long: { status: 400, error: 'the input length exceeds the context length' },
  server: { status: 500, error: 'llama runner process has terminated: exit status 2' },
} as const;

export const ollamaDialect: Dialect = {
  chatPath: '/api/chat',
  modelsPath: '/api/tags',
  contentType: 'application/x-ndjson',
  frames(turn, req) {
    const model = String(req.model ?? 'llama3.2');
    const line = (message: Record<string, unknown>, extra: Record<string, unknown> = {}, token = false): Frame => ({
      data: `${JSON.stringify({ model, created_at: new Date().toISOString(), message: { role: 'assistant', ...message }, ...extra })}\n`,
      token,
    });
    const out: Frame[] = [];
    for (const t of turn.text ?? []) out.push(line({ content: t }, { done: false }, true));
    (turn.tool_calls ?? []).forEach((c, i) =>
      out.push(line({ content: '', tool_calls: [{ id: c.id ?? `call_fake${i}`, function: { index: i, name: c.name, arguments: c.input } }] }, { done: false })),
    );
    out.push(
      line(
        { content: '' },
        {
          done: true,
          done_reason: turn.stop === 'max_tokens' ? 'length' : 'stop',
          total_duration: 885095291,
          load_duration: 3753500,
          prompt_eval_count: turn.usage?.input ?? 25,
          prompt_eval_duration: 328493000,
          eval_count: turn.usage?.output ?? 15,
          eval_duration: 552222000,
        },
      ),
    );
    return out;
  },
  broken: () => '{"model":"llama3.2","created_at":"2025-05-27T22:54:57.641643Z","message":{"role":"assis\n',
  error(kind) {
    const e = ERRORS[kind];
    return { status: e.status, body: { error: e.error } };
  },
  streamError: (kind) => `${JSON.stringify({ error: ERRORS[kind].error })}\n`,
  models: (names) => ({
    models: names.map((name) => ({
      name,
      model: name,
      modified_at: '2025-05-27T22:54:57.641643Z',
      size: 2019393189,
      digest: 'a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72',
      details: { parent_model: '', format: 'gguf', family: 'llama', families: ['llama'], parameter_size: '3.2B', quantization_level: 'Q4_K_M' },
    })),
  }),
};

export const startFakeOllama = (opts?: { models?: string[]; turns?: Turn[] }) => startFake(ollamaDialect, opts);
