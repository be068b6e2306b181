/**
 * GET /api/files/zip?path=…&path=…: the selected files and folders as one
 * ZIP download (stored entries), streamed to a plain browser download. Every
 * refusal (access, `too_many_paths`, `archive_too_large`, a missing path)
 * answers with the envelope before the first byte; a failure afterwards can
 * only cut the transfer, which leaves the archive visibly incomplete.
 */
import Router from '@koa/router';
import { PassThrough } from 'node:stream';
import type { DownloadZip } from '../../archives';
import { contentDisposition, type FileService } from '../../files';
import { requireUser } from '../middlewares/auth';
import { actor, type AppState } from '../context';
import { streamBody } from '../serve-file';
import { filesDoor } from './files.routes';
import { validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Files', 'user');
/** One `path` or several (query strings never fail this: it names the parameter for the description). */
const zipQuery = z.object({ path: z.union([z.string(), z.array(z.string())]).optional() });

export function filesZipRoutes(d: { files: FileService; zips: DownloadZip; log: (msg: string, err?: unknown) => void }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files' });
  r.use(filesDoor, requireUser);

  r.get('/zip', doc({ summary: 'Download files and folders as one ZIP (repeat `path`)', query: zipQuery, produces: ['application/zip'] }), async (ctx) => {
    const raw = validate(zipQuery, ctx.query).path;
    const paths = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(String);
    const abort = new AbortController();
    ctx.req.once('close', () => abort.abort());
    const fa = d.files.forActor(actor(ctx));
    const plan = await d.zips.plan(fa, paths, abort.signal);
    const out = new PassThrough({ highWaterMark: 1 << 20 });
    ctx.status = 200;
    ctx.type = 'application/zip';
    ctx.set('Content-Disposition', contentDisposition(plan.filename, false));
    ctx.set('Cache-Control', 'private, no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    d.zips.write(fa, plan, out, abort.signal).catch((e) => {
      if (!abort.signal.aborted) d.log(`zip download of ${paths.length} path(s) failed`, e);
      out.destroy(e as Error);
    });
    // A failed read destroys `out`, which cuts the transfer (the archive is then visibly incomplete).
    await streamBody(ctx, out, () => undefined);
  });
  return r;
}
