/**
 * POST /api/files/refresh {path}: the Refresh button. Re-checks the folder
 * against its storage now, whatever the catalogue's freshness, and answers
 * once the check is done (at most 10 s; a slower backend's changes still
 * arrive as realtime frames). The next listing shows what the storage holds.
 */
import Router from '@koa/router';
import type { Catalogue } from '../../catalogue';
import type { FileService } from '../../files';
import { requireUser } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { actor, type AppState } from '../context';
import { validate, z } from '../validate';
import { filesDoor } from './files.routes';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Files', 'user');

const WAIT_MS = 10_000;
const body = z.strictObject({ path: z.string().min(1).max(8192) });

export function filesRefreshRoutes(d: { catalogue: Catalogue; files: FileService; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files' });
  r.use(filesDoor, requireUser);
  r.post('/refresh', doc({ summary: 'Re-check a folder against its storage now', body }), async (ctx) => {
    const b = validate(body, await readObject(ctx, d.maxJsonBytes));
    const res = d.files.forActor(actor(ctx)).target(b.path);
    await d.catalogue.syncer.refresh(res.storage.id, res.rel, WAIT_MS);
    ctx.body = { ok: true };
  });
  return r;
}
