/** /api/files/ops: the caller's long-running operations. */
import Router from '@koa/router';
import { AppError } from '../../errors';
import type { JobQueue, Operation } from '../../jobs';
import type { TenantScope } from '../../db';
import { t, type Lang } from '../../lib/i18n';
import { requireUser } from '../middlewares/auth';
import { me, type AppState, type Ctx } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Operations', 'user');

/** Adds `error_text` in the reader's language; `error` stays the English detail. */
export function presentOp(op: Operation, lang: Lang): Operation {
  if (op.status !== 'failed' || !op.error_code) return op;
  return { ...op, error_text: t(lang, op.error_code, op.error_params ?? {}) };
}

/** Plugin jobs (spec: Operation status) answer a cancel with the op, 409 once finished and 403 for someone else's. */
const PLUGIN_KIND = 'plugin-action';
const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/** `present` lets a kind speak its own words (plugin jobs: `pending`/`ok`, labels, outputs); the default adds `error_text`. */
export function opsRoutes(d: { queue: JobQueue; present?: (s: TenantScope, op: Operation, lang: Lang) => Promise<Operation> }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files/ops' });
  r.use(requireUser);
  // Every read is in the caller's tenant (docs/tenants.md): another tenant's op is not found, like a missing one.
  const show = async (ctx: Ctx, op: Operation) => {
    const own = (await d.present?.(me(ctx), op, ctx.state.lang)) ?? op;
    return own === op ? presentOp(op, ctx.state.lang) : own;
  };
  const checkId = (ctx: Ctx) => {
    const id = ctx.params.id ?? '';
    if (!/^op_[0-9a-f]{1,64}$/.test(id)) throw new AppError('bad_id');
    return id;
  };
  /** Whether the caller may see the op: their own (a key only its own), or any as an admin in a session. */
  const sees = (ctx: Ctx, o: { owner_id: number | null; key_id: number | null }) => {
    const p = me(ctx);
    const key = ctx.state.key;
    return !((o.owner_id !== p.id && (p.role !== 'admin' || key)) || (key && o.key_id !== key.id));
  };
  const mine = async (ctx: Ctx): Promise<Operation> => {
    const id = checkId(ctx);
    const o = await d.queue.ownerOf(me(ctx), id);
    // Someone else's op is reported as missing, not forbidden, so ids cannot be probed; a key sees only its own ops.
    if (!o || !sees(ctx, o)) throw new AppError('not_found');
    const op = await d.queue.get(me(ctx), id);
    if (!op) throw new AppError('not_found'); // pruned meanwhile
    return op;
  };
  r.get('/', doc({ summary: 'My long-running operations' }), async (ctx) => {
    const ops = await d.queue.listVisible(me(ctx), me(ctx).id, 100, ctx.state.key?.id);
    ctx.body = { ops: await Promise.all(ops.map((op) => show(ctx, op))) };
  });
  r.get('/:id', doc({ summary: 'One operation, with its final error when it failed' }), async (ctx) => {
    ctx.body = await show(ctx, await mine(ctx));
  });
  // Best effort and always 200 (spec): the status must be read afterwards. Plugin ops follow their own rule.
  r.post('/:id/cancel', doc({ summary: 'Cancel an operation (best effort; read its status afterwards)' }), async (ctx) => {
    const id = checkId(ctx);
    const op = await d.queue.get(me(ctx), id);
    if (op?.kind === PLUGIN_KIND) {
      if (!sees(ctx, (await d.queue.ownerOf(me(ctx), id))!)) throw new AppError('forbidden', { reason: "someone else's op" });
      if (FINISHED.has(op.status)) throw new AppError('conflict', { reason: 'the op has finished' }, { status: (await show(ctx, op)).status });
      await d.queue.cancel(me(ctx), id);
      ctx.body = { op: await show(ctx, (await d.queue.get(me(ctx), id))!) };
      return;
    }
    try {
      await d.queue.cancel(me(ctx), (await mine(ctx)).id);
    } catch {
      /* unknown or foreign ids are ignored */
    }
    ctx.body = { ok: true };
  });
  return r;
}
