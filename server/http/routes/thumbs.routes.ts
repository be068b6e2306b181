/**
 * Thumbnails: `GET /api/files/thumb/{id}` (a live stamp or a signed-in caller
 * with read access) and `GET /api/files/thumb?token&size` (token only).
 * Both answer the cached JPEG with a private one-day cache lifetime.
 */
import Router from '@koa/router';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { AppError, isAppError } from '../../errors';
import { loadSharp } from '../../lib/sharp';
import type { FileService } from '../../files';
import { THUMB_SIZES, verifyStamp, verifyToken, type ThumbService } from '../../thumbs';
import { q, validate, z } from '../validate';
import { actor, me, type AppState, type Ctx } from '../context';
import type { TenantScope } from '../../db';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Thumbnails', 'signed');

const CACHE_CONTROL = 'private, max-age=86400';
const CACHED_EDGE = 320;
/** A live stamp (`exp`, `sig`) from a listing; a repeated or missing one is no stamp (never a refusal). */
const stampQuery = z.object({ exp: z.string().optional().catch(undefined), sig: z.string().optional().catch(undefined) });
const sizeQuery = z.object({
  token: q.str(200).optional(),
  size: z.coerce.number().refine((n) => (THUMB_SIZES as readonly number[]).includes(n), 'one of 64, 128, 256, 512'),
});

export function thumbRoutes(d: { thumbs: ThumbService; files: FileService }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files/thumb' });

  /**
   * 404 unless the node exists among the tenants', its state is `ready` and the JPEG is in the cache. A signed
   * URL names a node of any tenant (its signature is the access); a signed-in caller's, one of its tenant.
   */
  const readyFile = async (tenants: TenantScope[], id: number): Promise<string> => {
    const node = await d.thumbs.repo.byId(tenants, id);
    if (!node || node.deleted_at || node.thumb_state !== 'ready') throw new AppError('not_found');
    const file = d.thumbs.cachePath(id);
    try {
      await stat(file);
    } catch {
      throw new AppError('not_found');
    }
    return file;
  };

  const send = async (ctx: Ctx, file: string, size?: number) => {
    ctx.type = 'image/jpeg';
    ctx.set('Cache-Control', CACHE_CONTROL);
    ctx.body =
      size && size < CACHED_EDGE
        ? await (await loadSharp())(file).resize(size, size, { fit: 'inside' }).jpeg({ quality: 80 }).toBuffer()
        : createReadStream(file);
  };

  r.get('/', doc({ summary: 'A thumbnail by signed token and size', query: sizeQuery, produces: ['image/jpeg'] }), async (ctx) => {
    const { token, size } = validate(sizeQuery, ctx.query);
    const id = verifyToken(token, size);
    if (id === null) throw new AppError('unauthorised');
    await send(ctx, await readyFile(d.thumbs.tenants(), id), size);
  });

  r.get(
    '/:id',
    doc({
      summary: 'A file’s thumbnail by a live stamp from a listing, or for a signed-in caller with read access',
      query: stampQuery,
      produces: ['image/jpeg'],
    }),
    async (ctx) => {
      if (!/^\d{1,12}$/.test(ctx.params.id ?? '')) throw new AppError('bad_id');
      const id = Number(ctx.params.id);
      const { exp, sig } = validate(stampQuery, ctx.query);
      const stamped = verifyStamp(id, exp, sig);
      const tenants = stamped ? d.thumbs.tenants() : [];
      if (!stamped) {
        if (!ctx.state.principal) throw new AppError('unauthenticated');
        tenants.push(me(ctx));
        const node = await d.thumbs.repo.byId(tenants, id);
        if (!node || node.deleted_at) throw new AppError('not_found');
        // Same rules as the file itself: invisible (outside a key's root too) is 404, as if missing; visible but not readable is 403.
        try {
          d.files.forActor(actor(ctx)).target({ storage_id: node.storage_id, rel: node.path }, 'viewer');
        } catch (e) {
          if (isAppError(e) && e.code === 'permission_denied' && e.details?.source === 'key_root') throw new AppError('not_found');
          throw e;
        }
      }
      await send(ctx, await readyFile(tenants, id));
    },
  );
  return r;
}
