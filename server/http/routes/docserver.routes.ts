/**
 * The document editor integration (docs/docserver.md):
 *   - GET  /api/admin/external, PUT /api/admin/external/:name,
 *     POST /api/admin/external/:name/test (admin);
 *   - GET  /api/files/docserver/config?path= (signed-in: the signed editor
 *     descriptor);
 *   - GET  /api/files/docserver/fetch (signed URL) and
 *     POST /api/files/docserver/callback?node= (JWT): the document server's
 *     own calls, public (also on the public links listener).
 */
import Router from '@koa/router';
import type { Docserver } from '../../docserver';
import { isExternalName } from '../../docserver';
import { AppError } from '../../errors';
import type { EventBus } from '../../events';
import { requireAdmin, requireUser } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { serveFile } from '../serve-file';
import { actor, actorOf, me, reqMeta, selfUrl, type AppState, type Ctx } from '../context';
import { q, validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Document editor', 'admin');

const putBody = z.strictObject({
  url: z.string().max(2048),
  jwt_secret: z.string().max(1024).optional(),
  callback_url: z.string().max(2048).optional(),
});
const configQuery = z.object({ path: q.str().min(1) });
// Lenient on purpose: a malformed signature is refused (and logged) by the service with its reason.
const fetchQuery = z.object({
  node: q.int(1).optional(),
  tenant: q.int(1).optional(),
  probe: z
    .string()
    .regex(/^[a-f0-9]{32}$/)
    .optional(),
  exp: z.coerce.number().int().catch(0),
  sig: z.string().max(200).catch(''),
});
const callbackQuery = z.object({ node: q.int(1) });
/** The document server's save report; the callback service checks it (and its JWT) and refuses with its own codes, so every key passes here. */
const callbackBody = z.looseObject({
  status: z.unknown().optional().describe('2 and 6 save; others are acknowledged'),
  url: z.unknown().optional(),
  key: z.unknown().optional(),
  token: z.unknown().optional(),
});

const nameOf = (ctx: Ctx) => {
  const name = ctx.params.name ?? '';
  if (!isExternalName(name)) throw new AppError('not_found', { name });
  return name;
};

export function adminExternalRoutes(d: { docserver: Docserver; bus: EventBus; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin/external' });
  r.use(async (ctx, next) => {
    ctx.state.door = 'admin';
    await next();
  }, requireAdmin);

  r.get('/', doc({ summary: 'External services (the document server) and their settings' }), (ctx) => {
    ctx.body = { services: d.docserver.external.list() };
  });
  r.put('/:name', doc({ summary: 'Set an external service’s address and shared secret', body: putBody }), async (ctx) => {
    const name = nameOf(ctx);
    const b = validate(putBody, await readObject(ctx, d.maxJsonBytes));
    const { before, after } = await d.docserver.external.put(name, b);
    const changes: Record<string, unknown> = {};
    if (before.url !== after.url) changes.url = { from: before.url, to: after.url };
    if (b.jwt_secret !== undefined && b.jwt_secret !== '***') changes.jwt_secret = { changed: true };
    if (before.callback_url !== after.callback_url) changes.callback_url = { from: before.callback_url, to: after.callback_url };
    if (Object.keys(changes).length)
      await d.bus.emit(me(ctx), 'audit', {
        action: 'admin.config_change',
        actor: actorOf(ctx),
        request: reqMeta(ctx),
        resource: `external:${name}`,
        meta: { changes },
      });
    ctx.body = after;
  });
  r.post('/:name/test', doc({ summary: 'Probe an external service from here and report what the browser and it can reach' }), async (ctx) => {
    ctx.body = await d.docserver.tester.test(nameOf(ctx), selfUrl(ctx));
  });
  return r;
}

export function docserverRoutes(d: { docserver: Docserver; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files/docserver' });
  r.use(async (ctx, next) => {
    ctx.state.door = 'files';
    await next();
  });

  r.get('/config', doc({ summary: 'The signed editor descriptor of an office document', query: configQuery, auth: 'user' }), requireUser, async (ctx) => {
    const { path } = validate(configQuery, ctx.query);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await d.docserver.editor.descriptor(actor(ctx), path, { lang: ctx.state.lang, requestBase: selfUrl(ctx) });
  });

  r.get(
    '/fetch',
    doc({
      summary: 'The document server fetches a file’s bytes (signed URL, valid an hour)',
      query: fetchQuery,
      auth: 'signed',
      produces: ['application/octet-stream'],
    }),
    async (ctx) => {
      const got = await d.docserver.editor.fetch(validate(fetchQuery, ctx.query));
      if ('probe' in got) {
        ctx.set('Cache-Control', 'no-store');
        ctx.type = 'text/plain';
        ctx.body = got.probe;
        return;
      }
      await serveFile(ctx, got.file, { inline: false, cacheControl: 'no-store', conditional: false, ranges: 'single' });
    },
  );

  r.post(
    '/callback',
    doc({
      summary: 'The document server reports a save (JWT in Authorization; statuses 2 and 6 write)',
      query: callbackQuery,
      body: callbackBody,
      auth: 'signed',
    }),
    async (ctx) => {
      const { node } = validate(callbackQuery, ctx.query);
      const body = validate(callbackBody, await readObject(ctx, d.maxJsonBytes));
      await d.docserver.callbacks.handle(node, body, ctx.get('authorization') || ctx.state.docserverAuthorization || '');
      ctx.body = { error: 0 };
    },
  );
  return r;
}
