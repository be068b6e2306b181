/** /api/files/ops: the caller's long-running operations. */
import Router from '@koa/router';
import { AppError } from '../../errors';
import type { JobQueue, Operation } from '../../jobs';
import { t, type Lang } from '../../lib/i18n';
import { requireUser } from '../middlewares/auth';
import { me, type AppState, type Ctx } from '../context';

/** Adds `error_text` in the reader's language; `error` stays the English detail. */
export function presentOp(op: Operation, lang: Lang): Operation {
  if (op.status !== 'failed' || !op.error_code) return op;
  return { ...op, error_text: t(lang, op.error_code, op.error_params ?? {}) };
}

export function opsRoutes(d: { queue: JobQueue }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files/ops' });
  r.use(requireUser);
  const mine = (ctx: Ctx): Operation => {
    const id = ctx.params.id ?? '';
    if (!/^op_[0-9a-f]{1,64}$/.test(id)) throw new AppError('bad_id');
    const o = d.queue.ownerOf(id);
    const p = me(ctx);
    const key = ctx.state.key;
    // Someone else's op is reported as missing, not forbidden, so ids cannot be probed; a key sees only its own ops.
    if (!o || (o.owner_id !== p.id && (p.role !== 'admin' || key)) || (key && o.key_id !== key.id)) throw new AppError('not_found');
    return d.queue.get(id)!;
  };
  r.get('/', (ctx) => {
    ctx.body = { ops: d.queue.listVisible(me(ctx).id, 100, ctx.state.key?.id).map((op) => presentOp(op, ctx.state.lang)) };
  });
  r.get('/:id', (ctx) => {
    ctx.body = presentOp(mine(ctx), ctx.state.lang);
  });
  // Best effort and always 200 (spec): the status must be read afterwards.
  r.post('/:id/cancel', (ctx) => {
    try {
      d.queue.cancel(mine(ctx).id);
    } catch {
      /* unknown or foreign ids are ignored */
    }
    ctx.body = { ok: true };
  });
  return r;
}
