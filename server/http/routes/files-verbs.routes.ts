/**
 * The file verbs: POST /api/files/{move,copy,mkdir,rename,delete,save-text}
 * and POST /api/files/manager?action=newfile. Thin: validate, call the
 * service, present.
 */
import Router from '@koa/router';
import { MAX_TEXT_BYTES, type FileService } from '../../files';
import { requireUser } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { actor, type AppState, type Ctx } from '../context';
import { validate, z } from '../validate';
import { filesDoor } from './files.routes';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Files', 'user');

const path = z.string().min(1).max(8192);
const transfer = z.strictObject({ from: path, to: path, overwrite: z.boolean().default(false) });
const schemas = {
  mkdir: z.strictObject({ path }),
  rename: z.strictObject({ path, new_name: z.string().max(1024) }),
  delete: z.strictObject({ paths: z.array(path).min(1) }),
  saveText: z.strictObject({ path, content: z.string(), etag: z.string().max(256).optional() }),
  newfile: z.strictObject({ path, name: z.string().max(1024), type: z.string().max(32) }),
  action: z.object({ action: z.literal('newfile') }),
};

export function filesVerbRoutes(d: { files: FileService; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files' });
  r.use(filesDoor, requireUser);
  const body = <T extends z.ZodType>(ctx: Ctx, schema: T, limit = d.maxJsonBytes) => readObject(ctx, limit).then((b) => validate(schema, b));
  const v = (ctx: Ctx) => d.files.forActor(actor(ctx));

  r.post('/move', doc({ summary: 'Move a file or folder (202 with an operation for a long move)', body: transfer }), async (ctx) => {
    const b = await body(ctx, transfer);
    const res = await v(ctx).move(b.from, b.to, b.overwrite);
    if ('operation_id' in res) ctx.status = 202;
    ctx.body = res;
  });
  r.post('/copy', doc({ summary: 'Copy a file or folder (202 with an operation for a large copy)', body: transfer }), async (ctx) => {
    const b = await body(ctx, transfer);
    const res = await v(ctx).copy(b.from, b.to, b.overwrite);
    if ('operation_id' in res) ctx.status = 202;
    ctx.body = res;
  });
  r.post('/mkdir', doc({ summary: 'Create a folder', body: schemas.mkdir }), async (ctx) => {
    const b = await body(ctx, schemas.mkdir);
    ctx.body = { ok: true, entry: await v(ctx).mkdir(b.path) };
  });
  r.post('/rename', doc({ summary: 'Rename a file or folder', body: schemas.rename }), async (ctx) => {
    const b = await body(ctx, schemas.rename);
    ctx.body = { ok: true, entry: await v(ctx).rename(b.path, b.new_name) };
  });
  r.post('/delete', doc({ summary: 'Delete paths (to the trash); answers per path', body: schemas.delete }), async (ctx) => {
    const b = await body(ctx, schemas.delete);
    ctx.body = await v(ctx).delete(b.paths);
  });
  // JSON escaping can double the text, so the body may be twice the text limit.
  r.post('/save-text', doc({ summary: 'Save a text file (creates it, or saves over it)', body: schemas.saveText }), async (ctx) => {
    const b = await body(ctx, schemas.saveText, Math.max(d.maxJsonBytes, 2 * MAX_TEXT_BYTES + 65536));
    ctx.body = { ok: true, entry: await v(ctx).saveText(b.path, b.content, b.etag) };
  });
  r.post(
    '/manager',
    doc({ summary: 'Create an empty document (`?action=newfile`; `type` is a key of newdoc_types)', query: schemas.action, body: schemas.newfile }),
    async (ctx) => {
      validate(schemas.action, ctx.query);
      const b = await body(ctx, schemas.newfile);
      ctx.body = { ok: true, entry: await v(ctx).newFile(b.path, b.name, b.type) };
    },
  );
  return r;
}
