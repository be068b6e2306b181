/**
 * NFS exports (admin): `GET/POST /api/admin/gateways/nfs/exports`,
 * `PATCH/DELETE /api/admin/gateways/nfs/exports/:id`. An export serves a
 * storage or folder to the client addresses listed, with the rights of one
 * account or of one of its API keys. See docs/gateways-nfs.md.
 */
import Router from '@koa/router';
import { AppError } from '../../errors';
import type { NfsExports } from '../../gateways/nfs';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { validate, z } from '../validate';
import { actor, me, type AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: gateways', 'admin');

const fields = {
  path: z.string().trim().min(2).max(4096),
  clients: z.string().trim().min(1).max(4096),
  user_id: z.number().int().positive(),
  key_id: z.number().int().positive().nullable(),
  read_only: z.boolean(),
};
const newExport = z.strictObject({ ...fields, key_id: fields.key_id.default(null), read_only: fields.read_only.default(false) });
const patchExport = z.strictObject(fields).partial();

const idOf = (raw: string | undefined): number => {
  if (!/^\d{1,12}$/.test(raw ?? '') || Number(raw) <= 0) throw new AppError('bad_id');
  return Number(raw);
};

export function adminNfsRoutes(d: { exports: NfsExports; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin/gateways/nfs/exports' });
  r.use(requireAdmin);

  r.get('/', doc({ summary: 'NFS exports' }), async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { exports: await d.exports.list(me(ctx)) };
  });

  r.post('/', doc({ summary: 'Add an NFS export', body: newExport }), async (ctx) => {
    const b = validate(newExport, await readObject(ctx, d.maxJsonBytes));
    ctx.status = 201;
    ctx.body = { export: await d.exports.add(b, actor(ctx)) };
  });

  r.patch('/:id', doc({ summary: 'Change an NFS export', body: patchExport }), async (ctx) => {
    const id = idOf(ctx.params.id);
    const b = validate(patchExport, await readObject(ctx, d.maxJsonBytes));
    ctx.body = { export: await d.exports.update(id, b, actor(ctx)) };
  });

  r.delete('/:id', doc({ summary: 'Remove an NFS export' }), async (ctx) => {
    await d.exports.remove(idOf(ctx.params.id), actor(ctx));
    ctx.body = { ok: true };
  });

  return r;
}
