/**
 * The trash: GET /api/files/trash (items on storages the caller may change),
 * POST /api/files/trash/purge, POST /api/files/manager/restore and
 * POST /api/files/manager/trash/same (items whose content equals given
 * files or a sha256). Bulk verbs answer per item, like delete.
 */
import Router from '@koa/router';
import type { Catalogue } from '../../catalogue';
import type { FileService } from '../../files';
import type { Protection } from '../../protection';
import { AppError, isAppError } from '../../errors';
import { requireUser } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { actor, actorOf, me, reqMeta, type AppState, type Ctx } from '../context';
import { q, validate, z } from '../validate';
import { filesDoor } from './files.routes';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Versions and trash', 'user');

const ids = z.array(z.number().int().positive()).min(1).max(500);
const schemas = {
  list: z.object({ storage: q.str(255).optional(), limit: q.int(1, 1000).default(200), offset: q.int(0).default(0) }),
  restore: z.union([z.strictObject({ ids }), z.strictObject({ id: z.number().int().positive() })]),
  purge: z.union([z.strictObject({ ids }), z.strictObject({ all: z.literal(true) })]),
  same: z.union([
    z.strictObject({ entries: z.array(z.string().min(1).max(8192)).min(1).max(100) }),
    z.strictObject({ sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits') }),
  ]),
};

export function trashRoutes(d: { protection: Protection; catalogue: Catalogue; files: FileService; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files' });
  r.use(filesDoor, requireUser);
  const trash = d.protection.trash;
  const body = <T extends z.ZodType>(ctx: Ctx, schema: T) => readObject(ctx, d.maxJsonBytes).then((b) => validate(schema, b));

  /** Storages whose trash the caller may see and change: editor level on a writable storage. */
  const editable = (ctx: Ctx): number[] =>
    d.files
      .forActor(actor(ctx))
      .visible()
      .filter((s) => s.level !== 'viewer' && !s.storage.read_only)
      .map((s) => s.storage.id);
  /** The item, when the caller may act on it (in their tenant); otherwise `not_found` (as if it did not exist). */
  const own = async (ctx: Ctx, id: number) => {
    const row = await trash.byId(me(ctx), id);
    if (!row || !editable(ctx).includes(row.storage_id)) throw new AppError('not_found', { id });
    return row;
  };

  r.get('/trash', doc({ summary: 'Trashed items on storages I may change', query: schemas.list }), async (ctx) => {
    const o = validate(schemas.list, ctx.query);
    let storages = editable(ctx);
    if (o.storage) {
      const s = d.catalogue.repo.byNameOrUid(me(ctx), o.storage);
      storages = s && storages.includes(s.id) ? [s.id] : [];
    }
    ctx.body = await trash.list(me(ctx), storages, o.limit, o.offset);
  });

  r.post('/manager/restore', doc({ summary: 'Restore items from the trash (answers per item)', body: schemas.restore }), async (ctx) => {
    const b = await body(ctx, schemas.restore);
    if ('id' in b) {
      await own(ctx, b.id);
      ctx.body = { restored: [await trash.restore(me(ctx), b.id, actorOf(ctx), reqMeta(ctx))], failed: [] };
      return;
    }
    const restored = [];
    const failed: Array<{ id: number; error: string }> = [];
    for (const id of b.ids) {
      try {
        await own(ctx, id);
        restored.push(await trash.restore(me(ctx), id, actorOf(ctx), reqMeta(ctx)));
      } catch (e) {
        failed.push({ id, error: isAppError(e) ? e.code : 'internal' });
      }
    }
    ctx.body = { restored, failed };
  });

  r.post('/trash/purge', doc({ summary: 'Delete trashed items for good (answers per item)', body: schemas.purge }), async (ctx) => {
    const b = await body(ctx, schemas.purge);
    const list = 'all' in b ? (await trash.list(me(ctx), editable(ctx), 100_000)).items.map((i) => i.id) : b.ids;
    const purged: number[] = [];
    const failed: Array<{ id: number; error: string }> = [];
    for (const id of list) {
      try {
        await own(ctx, id);
        await trash.purge(me(ctx), id);
        purged.push(id);
      } catch (e) {
        failed.push({ id, error: isAppError(e) ? e.code : 'internal' });
      }
    }
    ctx.body = { purged, failed };
  });

  r.post('/manager/trash/same', doc({ summary: 'Trash items whose content equals given files or a sha256', body: schemas.same }), async (ctx) => {
    const b = await body(ctx, schemas.same);
    const files =
      'entries' in b ? b.entries.map((path) => d.files.forActor(actor(ctx)).target(path)).map((x) => ({ storageId: x.storage.id, rel: x.rel })) : undefined;
    ctx.body = { items: await trash.same(me(ctx), editable(ctx), { sha256: 'sha256' in b ? b.sha256 : undefined, files }) };
  });
  return r;
}
