/** /api/files/archive/*: list a ZIP, tar or tar.gz, extract a ZIP (202 op), create a ZIP from paths (202 op). */
import Router from '@koa/router';
import { MAX_PATHS, type ArchivesService } from '../../archives';
import { readObject } from '../middlewares/body';
import { requireUser } from '../middlewares/auth';
import { validate, z } from '../validate';
import { actor, type AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Archives', 'user');

const path = z.string().min(1).max(8192);
const listBody = z.object({ path });
const extractBody = z.object({ path, dest: path, overwrite: z.boolean().default(false) });
const addBody = z.object({ paths: z.array(path).min(1).max(MAX_PATHS), dest: path, compression: z.enum(['deflate', 'store']).default('deflate') });

export function archiveRoutes(d: { archives: ArchivesService; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files/archive' });
  r.use(requireUser);

  r.post('/list', doc({ summary: 'List the entries of a ZIP, tar or tar.gz', body: listBody }), async (ctx) => {
    const b = validate(listBody, await readObject(ctx, d.maxJsonBytes));
    ctx.body = await d.archives.list(actor(ctx), b.path);
  });
  r.post('/extract', doc({ summary: 'Extract a ZIP into a folder (an operation)', body: extractBody, status: 202 }), async (ctx) => {
    const b = validate(extractBody, await readObject(ctx, d.maxJsonBytes));
    ctx.status = 202;
    ctx.body = { operation_id: await d.archives.startExtract(actor(ctx), b) };
  });
  r.post('/add', doc({ summary: 'Create a ZIP from paths (an operation)', body: addBody, status: 202 }), async (ctx) => {
    const b = validate(addBody, await readObject(ctx, d.maxJsonBytes));
    ctx.status = 202;
    ctx.body = { operation_id: await d.archives.startAdd(actor(ctx), b) };
  });
  return r;
}
