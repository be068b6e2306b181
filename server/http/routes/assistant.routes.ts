/**
 * The AI assistant (spec: AI assistant; docs/assistant.md): the person's
 * routes under /api/files/assistant (chat and decide answer server-sent
 * events), the admin settings under /api/admin/assistant (admin-verb keys:
 * /api/ai/admin/assistant), and the MCP file tools for agents at /api/mcp
 * (streamable HTTP, stateless; keys with `ai.use`).
 */
import Router from '@koa/router';
import { PassThrough } from 'node:stream';
import { assistantPatchSchema, type Assistant } from '../../assistant';
import { requirePermission } from '../../auth';
import { AppError, isAppError } from '../../errors';
import type { EventBus } from '../../events';
import { requireAdmin, requireUser } from '../middlewares/auth';
import { readJson, readObject } from '../middlewares/body';
import { actor, actorOf, me, reqMeta, type AppState, type Ctx, type Mw } from '../context';
import { validate, z } from '../validate';
import { t } from '../../lib/i18n';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Assistant', 'user');

const chatBody = z.strictObject({
  conversation_id: z.string().min(1).max(64).optional(),
  message: z.string().min(1),
  paths: z.array(z.string().min(1).max(8192)).max(20).optional(),
});
const decideBody = z.strictObject({ approve: z.boolean() });
const undoBody = z.strictObject({ step_id: z.string().min(1).max(64) });
const prefsBody = z.strictObject({ confirm_all: z.boolean() });

const PING_MS = 25_000;

const files: Mw = async (ctx, next) => {
  ctx.state.door = 'files';
  await next();
};

/** Answers a started request as an event stream; the request's end aborts the model turn. */
function sse(ctx: Ctx, go: (emit: (event: string, data: unknown) => void, signal: AbortSignal) => Promise<void>): void {
  const stream = new PassThrough();
  const ac = new AbortController();
  // The response's close (the client went away, or the stream ended) stops a model turn still running.
  ctx.res.on('close', () => ac.abort());
  ctx.req.socket.setTimeout(0);
  ctx.set({ 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
  ctx.type = 'text/event-stream';
  ctx.status = 200;
  ctx.body = stream;
  const emit = (event: string, data: unknown) => {
    if (!stream.writableEnded) stream.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  // A model may think for minutes without a token: a comment line keeps proxies from closing the stream.
  const ping = setInterval(() => !stream.writableEnded && stream.write(': ping\n\n'), PING_MS);
  void go(emit, ac.signal)
    .catch((e) => {
      const err = isAppError(e) ? e : new AppError('internal');
      emit('error', { error: err.code, message: t(ctx.state.lang, err.code, err.params), detail: err.details ?? null });
    })
    .finally(() => {
      clearInterval(ping);
      stream.end();
    });
}

export function assistantRoutes(d: { assistant: Assistant; bus: EventBus; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>();
  const a = d.assistant;
  const body = async <T extends z.ZodType>(ctx: Ctx, schema: T) => validate(schema, await readObject(ctx, d.maxJsonBytes));
  const P = '/api/files/assistant';

  r.get(P, doc({ summary: 'The assistant’s state for me: provider, model, retention, my choice' }), files, requireUser, async (ctx) => {
    ctx.body = await a.state(actor(ctx));
  });
  r.put(`${P}/prefs`, doc({ summary: 'Whether every assistant change waits for my approval', body: prefsBody }), files, requireUser, async (ctx) => {
    ctx.body = await a.setConfirmAll(actor(ctx), (await body(ctx, prefsBody)).confirm_all);
  });
  r.get(`${P}/conversations`, doc({ summary: 'My assistant conversations' }), files, requireUser, async (ctx) => {
    ctx.body = await a.list(actor(ctx));
  });
  r.delete(`${P}/conversations`, doc({ summary: 'Delete all my assistant conversations' }), files, requireUser, async (ctx) => {
    ctx.body = await a.delete(actor(ctx));
  });
  r.get(`${P}/conversations/:id`, doc({ summary: 'One assistant conversation' }), files, requireUser, async (ctx) => {
    ctx.body = await a.get(actor(ctx), ctx.params.id);
  });
  r.delete(`${P}/conversations/:id`, doc({ summary: 'Delete one assistant conversation' }), files, requireUser, async (ctx) => {
    ctx.body = await a.delete(actor(ctx), ctx.params.id);
  });
  r.post(
    `${P}/chat`,
    doc({ summary: 'Ask the assistant: a Server-Sent Events stream of the turn', body: chatBody, produces: ['text/event-stream'] }),
    files,
    requireUser,
    async (ctx) => {
      // The body may hold the message plus paths; anything larger is refused while streaming, never buffered whole.
      const max = a.max();
      let raw: unknown;
      try {
        raw = await readJson(ctx, max * 4 + 256 * 1024);
      } catch (e) {
        if (isAppError(e) && e.code === 'payload_too_large') throw new AppError('assistant_message_long', { max }, { max });
        throw e;
      }
      const b = validate(chatBody, raw);
      sse(ctx, (await a.chat(actor(ctx), b)).go);
    },
  );
  r.post(
    `${P}/conversations/:id/decide`,
    doc({ summary: 'Approve or refuse a waiting step: an event stream of what follows', body: decideBody, produces: ['text/event-stream'] }),
    files,
    requireUser,
    async (ctx) => {
      const b = await body(ctx, decideBody);
      sse(ctx, (await a.decide(actor(ctx), ctx.params.id, b.approve)).go);
    },
  );
  r.post(`${P}/conversations/:id/undo`, doc({ summary: 'Undo a reversible step', body: undoBody }), files, requireUser, async (ctx) => {
    const b = await body(ctx, undoBody);
    ctx.body = await a.undo(actor(ctx), ctx.params.id, b.step_id);
  });

  // Admin settings.
  const admin: Mw = async (ctx, next) => {
    ctx.state.door = 'admin';
    await requireAdmin(ctx, next);
  };
  r.get('/api/admin/assistant', doc({ summary: 'Assistant settings (the API key reads back as ***)', auth: 'admin' }), admin, (ctx) => {
    ctx.body = a.settings.view();
  });
  r.patch('/api/admin/assistant', doc({ summary: 'Change assistant settings', body: assistantPatchSchema, auth: 'admin' }), admin, async (ctx) => {
    const b = await body(ctx, assistantPatchSchema);
    ctx.body = await a.settings.patch(b);
    const { api_key: key, ...shown } = b;
    await d.bus.emit(me(ctx), 'audit', {
      action: 'admin.config_change',
      actor: actorOf(ctx),
      request: reqMeta(ctx),
      resource: 'assistant',
      meta: { ...shown, ...(key !== undefined ? { api_key: key ? 'set' : 'cleared' } : {}) },
    });
  });
  r.post(
    '/api/admin/assistant/test',
    doc({ summary: 'Test the provider: list models and ask for a one-word reply with a tool on offer', auth: 'admin' }),
    admin,
    async (ctx) => {
      ctx.body = await a.test();
    },
  );

  // MCP for agents: one stateless server and transport per request, as the caller.
  r.all(
    '/api/mcp',
    doc({ summary: 'MCP file tools for agents (Streamable HTTP: JSON-RPC in a POST; other methods answer 405)', consumes: 'application/json', tag: 'MCP' }),
    requireUser,
    async (ctx) => {
      const who = actor(ctx);
      requirePermission(who, 'ai.use');
      if (ctx.method !== 'POST') throw new AppError('method_not_allowed');
      const parsed = await readJson(ctx, d.maxJsonBytes);
      ctx.respond = false;
      await a.mcp(who, ctx.req, ctx.res, parsed);
    },
  );
  return r;
}
