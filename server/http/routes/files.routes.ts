/**
 * Read side of the Files API: GET /api/files/manager (listing, keyset
 * `cursor` extension), GET /api/files/search, GET /api/files/raw (ranges,
 * conditional requests, multipart/byteranges).
 */
import Router from '@koa/router';
import { sendLocal } from '../send-local';
import { AppError } from '../../errors';
import { byteranges, contentDisposition, ifRangeAllows, notModified, planRange, type Files } from '../../files';
import { requireUser } from '../middlewares/auth';
import { me, type AppState, type Ctx } from '../context';
import { q, validate, z } from '../validate';

const listQuery = z.object({
  path: q.str().default('/'),
  sort: z.enum(['name', 'size', 'modified']).default('name'),
  dir: z.enum(['asc', 'desc']).default('asc'),
  limit: q.int(1, 5000).default(1000),
  offset: q.int(0).default(0),
  cursor: q.str(512).optional(),
});

const isoMs = z.string().max(64).transform((v, c) => {
  const t = Date.parse(v);
  if (Number.isNaN(t)) c.addIssue({ code: 'custom', message: 'must be an ISO 8601 date' });
  return t;
});

const searchQuery = z.object({
  q: q.str(256).default(''),
  type: z.enum(['file', 'dir']).optional(),
  ext: z.string().max(512).regex(/^[A-Za-z0-9]+(,[A-Za-z0-9]+)*$/).transform((v) => v.split(',')).optional(),
  min_size: q.int(0).optional(),
  max_size: q.int(0).optional(),
  after: isoMs.optional(),
  before: isoMs.optional(),
  path: q.str().optional(),
  limit: q.int(1, 1000).default(200),
});

const rawQuery = z.object({ path: q.str(), inline: q.bool().optional() });

/** Sets the envelope door so file verbs map `read_only` to 403 and `quota_exceeded` to 413. */
export const filesDoor = async (ctx: Ctx, next: () => Promise<unknown>) => {
  ctx.state.door = 'files';
  await next();
};

export function filesRoutes(d: { files: Files }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files' });
  r.use(filesDoor, requireUser);

  r.get('/manager', async (ctx) => {
    const input = validate(listQuery, ctx.query);
    const body = await d.files.listing.list(me(ctx), input);
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  });

  r.get('/search', (ctx) => {
    const input = validate(searchQuery, ctx.query);
    const res = d.files.search.search(me(ctx), input);
    ctx.type = 'application/json';
    ctx.body = `{"path":${JSON.stringify(res.path)},"entries":${res.entriesJson},"total":${res.total},"storage":${JSON.stringify(res.storage)}}`;
  });

  r.get('/raw', async (ctx) => {
    const input = validate(rawQuery, ctx.query);
    const f = await d.files.download.file(me(ctx), input.path);
    ctx.set({
      ETag: f.etag,
      'Last-Modified': new Date(f.mtime).toUTCString(),
      'Accept-Ranges': 'bytes',
      'Content-Disposition': contentDisposition(f.name, !!input.inline),
      'Cache-Control': 'private, no-cache',
      'X-Content-Type-Options': 'nosniff',
    });
    if (notModified({ ifNoneMatch: ctx.get('if-none-match') || undefined, ifModifiedSince: ctx.get('if-modified-since') || undefined }, f.etag, f.mtime)) {
      ctx.status = 304;
      return;
    }
    const plan = ifRangeAllows(ctx.get('if-range') || undefined, f.etag, f.mtime) ? planRange(ctx.get('range') || undefined, f.size) : { kind: 'full' as const };
    if (plan.kind === 'unsatisfiable') {
      ctx.set('Content-Range', `bytes */${f.size}`);
      throw new AppError('range_not_satisfiable', { size: f.size });
    }
    const head = ctx.method === 'HEAD';
    // Made only for driver streams: an abort builds a DOMException with a stack, a cost the local path skips.
    const signal = () => {
      const abort = new AbortController();
      ctx.res.once('close', () => abort.abort());
      return abort.signal;
    };
    if (plan.kind === 'full') {
      ctx.status = 200;
      ctx.type = f.mime;
      ctx.length = f.size;
      if (head) return;
      if (f.localPath) return void (await sendLocal(ctx, f.localPath, 0, f.size - 1));
      ctx.body = await f.open(undefined, signal());
      return;
    }
    ctx.status = 206;
    if (plan.spans.length === 1) {
      const [s] = plan.spans;
      ctx.type = f.mime;
      ctx.set('Content-Range', `bytes ${s.start}-${s.end}/${f.size}`);
      ctx.length = s.end - s.start + 1;
      if (head) return;
      if (f.localPath) return void (await sendLocal(ctx, f.localPath, s.start, s.end));
      ctx.body = await f.open(s, signal());
      return;
    }
    const multi = byteranges(f, plan.spans, signal());
    ctx.type = multi.type;
    ctx.length = multi.length;
    if (!head) ctx.body = multi.body;
    else multi.body.destroy();
  });
  return r;
}
