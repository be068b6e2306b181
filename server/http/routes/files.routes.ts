/**
 * Read side of the Files API: GET /api/files/manager (listing, keyset
 * `cursor` extension), GET /api/files/search, GET /api/files/raw (ranges,
 * conditional requests, multipart/byteranges).
 */
import Router from '@koa/router';
import type { FileService, PageEncoding } from '../../files';
import { serveFile } from '../serve-file';
import { sendBuffers } from '../send-buffers';
import { requireUser } from '../middlewares/auth';
import { actor, type AppState, type Ctx } from '../context';
import { q, validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Files', 'user');

const listQuery = z.object({
  path: q.str().default('/'),
  sort: z.enum(['name', 'size', 'modified']).default('name'),
  dir: z.enum(['asc', 'desc']).default('asc'),
  limit: q.int(1, 5000).default(1000),
  offset: q.int(0).default(0),
  cursor: q.str(512).optional(),
});

const isoMs = z
  .string()
  .max(64)
  .transform((v, c) => {
    const t = Date.parse(v);
    if (Number.isNaN(t)) c.addIssue({ code: 'custom', message: 'must be an ISO 8601 date' });
    return t;
  });

const searchQuery = z.object({
  q: q.str(256).default(''),
  type: z.enum(['file', 'dir']).optional(),
  ext: z
    .string()
    .max(512)
    .regex(/^[A-Za-z0-9]+(,[A-Za-z0-9]+)*$/)
    .transform((v) => v.split(','))
    .optional(),
  min_size: q.int(0).optional(),
  max_size: q.int(0).optional(),
  after: isoMs.optional(),
  before: isoMs.optional(),
  taken_from: isoMs.optional(),
  taken_to: isoMs.optional(),
  path: q.str().optional(),
  limit: q.int(1, 1000).default(200),
});

const rawQuery = z.object({ path: q.str(), inline: q.bool().optional() });

/** Sets the envelope door so file verbs map `read_only` to 403 and `quota_exceeded` to 413. */
export const filesDoor = (ctx: Ctx, next: () => Promise<unknown>) => {
  ctx.state.door = 'files';
  return next();
};

/**
 * Brotli whenever the client accepts it, else gzip, else none. Asked one by
 * one: Koa's negotiation picks by the client's order, and browsers list br last.
 */
function pageEncoding(ctx: Ctx): PageEncoding | undefined {
  if (ctx.acceptsEncodings('br', 'identity') === 'br') return 'br';
  return ctx.acceptsEncodings('gzip', 'identity') === 'gzip' ? 'gzip' : undefined;
}

export function filesRoutes(d: { files: FileService }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files' });
  r.use(filesDoor, requireUser);

  r.get('/manager', doc({ summary: 'List a folder (`/` lists my storages); sorting, paging and a keyset cursor', query: listQuery }), async (ctx) => {
    const input = validate(listQuery, ctx.query);
    const { body, encoding } = await d.files.forActor(actor(ctx)).list(input, pageEncoding(ctx));
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'no-store');
    ctx.vary('Accept-Encoding');
    if (encoding) ctx.set('Content-Encoding', encoding);
    if (Array.isArray(body)) sendBuffers(ctx, body);
    else ctx.body = body;
  });

  r.get('/search', doc({ summary: 'Search names, file text (with a snippet of it) and metadata', query: searchQuery }), async (ctx) => {
    const input = validate(searchQuery, ctx.query);
    const res = await d.files.forActor(actor(ctx)).search(input);
    ctx.type = 'application/json';
    ctx.body = `{"path":${JSON.stringify(res.path)},"entries":${res.entriesJson},"total":${res.total},"storage":${JSON.stringify(res.storage)}}`;
  });

  r.get(
    '/raw',
    doc({ summary: 'A file’s bytes (Range, conditional requests and multipart/byteranges honoured)', query: rawQuery, produces: ['application/octet-stream'] }),
    async (ctx) => {
      const input = validate(rawQuery, ctx.query);
      // A plain GET sends the bytes; a HEAD or a revalidation (mostly 304) needs no open file.
      const send = ctx.method === 'GET' && !ctx.get('if-none-match') && !ctx.get('if-modified-since');
      const f = await d.files.forActor(actor(ctx)).open(input.path, { send });
      await serveFile(ctx, f, { inline: !!input.inline, cacheControl: 'private, no-cache', conditional: true, ranges: 'multi' });
    },
  );
  return r;
}
