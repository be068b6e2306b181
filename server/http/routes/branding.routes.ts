/**
 * Tenant branding of the public pages (docs/tenants.md, "Step 4: branding"). A tenant admin's own:
 * `GET/PUT /api/admin/branding` (`{name?, colour?}` → `{branding}`), `PUT /api/admin/branding/logo` (the image's
 * bytes: PNG, JPEG or WebP, at most 256 KiB) and `DELETE` of it. The logo of the request's tenant (its host or
 * `/t/<slug>` prefix), public: `GET /api/public/branding/logo` with a strong ETag.
 */
import Router from '@koa/router';
import { AppError } from '../../errors';
import { LOGO_MAX_BYTES, type Brandings } from '../../auth';
import { readBytes, readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { validate } from '../validate';
import { actorOf, linkTenant, me, reqMeta, type AppState, type Ctx } from '../context';
import { publicHeaders } from '../public/page';
import { routeDoc } from '../openapi/route-doc';
import { branding } from './platform-tenants.schema';

const doc = routeDoc('Admin: branding', 'admin');
const LOGO_TYPES = 'PNG, JPEG or WebP (known by its bytes; SVG is refused: 415 `unsupported_media_type`), at most 256 KiB (413 `payload_too_large`).';

/** A logo upload's bytes (the size is checked while reading, the type by the bytes in `Brandings.setLogo`). */
export const logoBytes = (ctx: Ctx): Promise<Buffer> => readBytes(ctx, LOGO_MAX_BYTES);
/** The OpenAPI description of a logo upload. */
export const logoDoc = { consumes: 'application/octet-stream', description: LOGO_TYPES };
export const auditOf = (ctx: Ctx) => ({ actor: actorOf(ctx), request: reqMeta(ctx) });

export function adminBrandingRoutes(d: { brandings: Brandings; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin/branding' });
  r.use(requireAdmin);
  r.get('/', doc({ summary: 'My tenant’s branding of its public pages' }), async (ctx) => {
    ctx.body = { branding: await d.brandings.get(me(ctx)) };
  });
  r.put('/', doc({ summary: 'Set my tenant’s name and colour on its public pages (absent fields are cleared)', body: branding }), async (ctx) => {
    const b = validate(branding, await readObject(ctx, d.maxJsonBytes));
    ctx.body = { branding: await d.brandings.setText(me(ctx), b, auditOf(ctx)) };
  });
  r.put('/logo', doc({ summary: 'Set my tenant’s logo', ...logoDoc }), async (ctx) => {
    ctx.body = { branding: await d.brandings.setLogo(me(ctx), await logoBytes(ctx), auditOf(ctx)) };
  });
  r.delete('/logo', doc({ summary: 'Remove my tenant’s logo' }), async (ctx) => {
    ctx.body = { branding: await d.brandings.removeLogo(me(ctx), auditOf(ctx)) };
  });
  return r;
}

export function publicBrandingRoutes(d: { brandings: Brandings }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/public/branding' });
  r.get(
    '/logo',
    routeDoc(
      'Public links',
      'public',
    )({
      summary: 'The logo of the tenant the host or `/t/<slug>` prefix selects (404 when it has none)',
      produces: ['image/png', 'image/jpeg', 'image/webp'],
    }),
    async (ctx) => {
      const logo = await d.brandings.logo(linkTenant(ctx));
      if (!logo) throw new AppError('not_found');
      publicHeaders(ctx);
      ctx.set('Content-Security-Policy', "default-src 'none'");
      ctx.set('ETag', `"${logo.etag}"`);
      // A page names the logo by its hash (`?v=`): that address never changes its bytes.
      ctx.set('Cache-Control', ctx.query.v === logo.etag ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
      ctx.type = logo.mime;
      ctx.status = 200; // `fresh` compares only on a success status
      if (ctx.fresh) {
        ctx.status = 304;
        return;
      }
      ctx.body = logo.bytes;
    },
  );
  return r;
}
