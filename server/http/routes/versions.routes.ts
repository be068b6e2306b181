/**
 * Versions of a file: GET /api/files/versions?path= (viewer), GET
 * /api/files/versions/raw?path=&id=[&inline=1] (viewer: a version's bytes,
 * to look at before restoring) and POST /api/files/versions/restore
 * {path, id} (editor; spec: version restore needs at least editor).
 */
import Router from '@koa/router';
import type { FileService } from '../../files';
import type { Protection } from '../../protection';
import { presentNode } from '../../files';
import { AppError } from '../../errors';
import { requireUser } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { actor, actorOf, reqMeta, type AppState } from '../context';
import { q, validate, z } from '../validate';
import { filesDoor } from './files.routes';
import { serveFile } from '../serve-file';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Versions and trash', 'user');

const listQuery = z.object({ path: q.str(8192) });
const VIEW_SANDBOX = "sandbox; default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'";
const rawQuery = z.object({ path: q.str(8192), id: q.int(1), inline: q.bool().optional() });
const restoreBody = z.strictObject({ path: z.string().min(1).max(8192), id: z.number().int().positive() });

export function versionsRoutes(d: { protection: Protection; files: FileService; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files/versions' });
  r.use(filesDoor, requireUser);

  r.get('/', doc({ summary: 'A file’s kept versions', query: listQuery }), async (ctx) => {
    const { path } = validate(listQuery, ctx.query);
    const res = d.files.forActor(actor(ctx)).target(path);
    if (res.rel === '') throw new AppError('bad_path', {}, { reason: 'a file is required' });
    ctx.body = { path, versions: await d.protection.versions.list(res.storage, res.rel) };
  });

  r.get(
    '/raw',
    doc({ summary: 'An old version’s bytes, to look at before restoring', query: rawQuery, produces: ['application/octet-stream'] }),
    async (ctx) => {
      const input = validate(rawQuery, ctx.query);
      const res = d.files.forActor(actor(ctx)).target(input.path);
      if (res.rel === '') throw new AppError('bad_path', {}, { reason: 'a file is required' });
      const f = await d.protection.versions.open(res.storage, res.rel, input.id);
      // Shown in a tab of its own: an old HTML or SVG version must not run as this origin.
      if (input.inline && f.mime !== 'application/pdf') ctx.set('Content-Security-Policy', VIEW_SANDBOX);
      await serveFile(ctx, f, { inline: !!input.inline, cacheControl: 'private, no-cache', conditional: true, ranges: 'multi' });
    },
  );

  r.post('/restore', doc({ summary: 'Restore a version (needs editor access)', body: restoreBody }), async (ctx) => {
    const b = validate(restoreBody, await readObject(ctx, d.maxJsonBytes));
    const res = d.files.forActor(actor(ctx)).target(b.path, 'editor');
    if (res.rel === '') throw new AppError('bad_path', {}, { reason: 'a file is required' });
    const node = await d.protection.versions.restore(res.storage, res.rel, b.id, actorOf(ctx), reqMeta(ctx));
    ctx.body = { ok: true, entry: presentNode(node, res.level) };
  });
  return r;
}
