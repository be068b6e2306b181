/**
 * File requests: the upload page `/d/{token}` and the anonymous, chunked,
 * resumable drop API under `/api/public/drop/{token}` (documented in
 * docs/public-links.md). Door `drop`: `read_only` 409, `quota_exceeded` 507,
 * `storage_unavailable` 503 with the link and PIN still valid.
 */
import Router from '@koa/router';
import { dropSettingsOf, type Shares } from '../../shares';
import type { AppState, Ctx, Mw } from '../context';
import { linkTenant, reqMeta, setPartEtag } from '../context';
import { readObject } from '../middlewares/body';
import { AppError, isAppError } from '../../errors';
import { t } from '../../lib/i18n';
import { pt } from '../../shares';
import { statusFor } from '../error-map';
import { receiveDropForm } from '../public/drop-form';
import { deadPage, dropPage, dropResultPage } from '../public/pages';
import { publicHeaders } from '../public/page';
import { validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('File requests', 'public');

const dropDoor: Mw = async (ctx, next) => {
  ctx.state.door = 'drop';
  if (!ctx.path.startsWith('/api/')) ctx.state.renderPublicError = deadPage;
  publicHeaders(ctx);
  ctx.set('Cache-Control', 'no-store');
  await next();
};

/** Refusals of the link itself, answered with the dead-link page. */
const DEAD_LINK = new Set(['not_found', 'expired', 'revoked', 'gone', 'storage_unavailable', 'storage_unreachable']);

const startBody = z.object({ name: z.string().max(256).optional(), note: z.string().max(20_000).optional(), pin: z.string().max(64).optional() });
const fileBody = z.object({ name: z.string().min(1).max(1024), size: z.number().int().min(0), mime: z.string().max(255).optional() });
const finalizeBody = z.object({
  etags: z
    .array(z.object({ part: z.number().int().min(1), etag: z.string().max(512) }))
    .min(1)
    .max(10_000),
});
const partParam = z.coerce.number().int().min(1).max(10_000);
const sha = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/)
  .optional();
const partParams = z.object({ part: partParam });
/** `dt`: a download token from the PIN check; a repeated one is none (never a refusal). */
const startQuery = z.object({ dt: z.string().optional().catch(undefined) });

export function shareDropRoutes(d: { shares: Shares; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>();
  const { drops, service } = d.shares;
  const base = '/api/public/drop/:token';
  const json = <T extends z.ZodType>(ctx: Ctx, schema: T) => readObject(ctx, d.maxJsonBytes).then((b) => validate(schema, b));

  r.get('/d/:token', doc({ summary: 'A file request’s upload page', produces: ['text/html'] }), dropDoor, async (ctx) => {
    const o = await service.open(linkTenant(ctx), ctx.params.token, 'drop');
    dropPage(ctx, { lang: ctx.state.lang, token: o.share.token, settings: dropSettingsOf(o.share), needsPin: !!o.share.pin_hash });
  });

  // The same form, posted by a browser without JavaScript (or curl): files up to one chunk each.
  r.post(
    '/d/:token',
    doc({ summary: 'The upload page’s form without JavaScript: files up to one chunk each', consumes: 'multipart/form-data', produces: ['text/html'] }),
    dropDoor,
    async (ctx) => {
      const lang = ctx.state.lang;
      const shown = (e: AppError) => ({
        message: e.code === 'unauthorised' ? pt(lang, 'pin.prompt') : t(lang, e.code, e.params),
        status: statusFor(e.code, 'drop'),
      });
      try {
        const r = await receiveDropForm(ctx, drops, linkTenant(ctx), ctx.params.token);
        dropResultPage(ctx, { lang, token: ctx.params.token, received: r.received, error: r.error && shown(r.error) });
      } catch (e) {
        // A dead or unreachable link gets the dead-link page; any other refusal is told on the result page.
        if (!isAppError(e) || DEAD_LINK.has(e.code)) throw e;
        dropResultPage(ctx, { lang, token: ctx.params.token, received: [], error: shown(e) });
      }
    },
  );

  r.post(`${base}/submissions`, doc({ summary: 'Start a submission (name, note, PIN)', query: startQuery, body: startBody }), dropDoor, async (ctx) => {
    const b = await json(ctx, startBody);
    const cred = { pin: b.pin ?? (ctx.get('x-service-pin') || undefined), dt: validate(startQuery, ctx.query).dt };
    ctx.body = await drops.start(linkTenant(ctx), ctx.params.token, cred, b, reqMeta(ctx));
  });

  r.post(`${base}/submissions/:sid/files`, doc({ summary: 'Announce one file of a submission', body: fileBody }), dropDoor, async (ctx) => {
    ctx.body = await drops.addFile(linkTenant(ctx), ctx.params.token, ctx.params.sid, await json(ctx, fileBody), reqMeta(ctx));
  });

  r.get(`${base}/submissions/:sid/files/:upload`, doc({ summary: 'The parts one file of a submission already holds' }), dropDoor, async (ctx) => {
    ctx.body = await drops.status(linkTenant(ctx), ctx.params.token, ctx.params.sid, ctx.params.upload);
  });

  r.put(
    `${base}/submissions/:sid/files/:upload/parts/:part`,
    doc({ summary: 'Send one part of a file (the body is the bytes; optional X-Chunk-SHA256)', params: partParams, consumes: 'application/octet-stream' }),
    dropDoor,
    async (ctx) => {
      const part = validate(partParams, ctx.params).part;
      const digest = validate(z.object({ sha }), { sha: ctx.get('x-chunk-sha256') || undefined }).sha;
      const stored = await drops.chunk(linkTenant(ctx), ctx.params.token, ctx.params.sid, ctx.params.upload, part, ctx.req, reqMeta(ctx), digest);
      setPartEtag(ctx, stored.etag);
      ctx.body = stored;
    },
  );

  r.post(
    `${base}/submissions/:sid/files/:upload/finalize`,
    doc({ summary: 'Complete one file of a submission', body: finalizeBody }),
    dropDoor,
    async (ctx) => {
      const b = await json(ctx, finalizeBody);
      ctx.body = await drops.finalize(linkTenant(ctx), ctx.params.token, ctx.params.sid, ctx.params.upload, b.etags, reqMeta(ctx));
    },
  );

  r.post(`${base}/submissions/:sid/finish`, doc({ summary: 'Finish a submission (the owner is told)' }), dropDoor, async (ctx) => {
    ctx.body = await drops.finish(linkTenant(ctx), ctx.params.token, ctx.params.sid, reqMeta(ctx));
  });
  return r;
}
