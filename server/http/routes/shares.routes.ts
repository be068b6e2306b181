/**
 * The signed-in side of sharing: create, list and revoke links and file
 * requests (`/api/files/share`), and e-mail a link
 * (`/api/files/permissions/share-mail`).
 */
import Router from '@koa/router';
import { AppError } from '../../errors';
import { parseDuration } from '../../lib/duration';
import { isLang } from '../../lib/i18n';
import { splitAddresses } from '../../events';
import { pt, publicDate, type Shares } from '../../shares';
import { requireUser } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { actor, linkOrigin, me, type AppState } from '../context';
import { validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Sharing', 'user');

const dropSettings = z
  .object({
    max_files: z.number().int().min(1).max(1000).optional(),
    max_file_size_mb: z
      .number()
      .int()
      .min(1)
      .max(1024 * 1024)
      .optional(),
    allowed_ext: z
      .array(z.string().regex(/^\.?[A-Za-z0-9]{1,16}$/))
      .max(100)
      .optional(),
    ask_name: z.boolean().optional(),
  })
  .strict();

const createBody = z
  .object({
    path: z.string().min(1).max(8192),
    kind: z.enum(['link', 'drop']).optional(),
    ttl: z.union([z.string().max(32), z.number().positive()]).optional(),
    expires_at: z.string().max(64).optional(),
    max_downloads: z.number().int().min(1).max(1_000_000_000).optional(),
    pin: z
      .string()
      .min(4)
      .max(64)
      .regex(/^[\x21-\x7e]+$/)
      .optional(),
    password: z.boolean().optional(),
    comment: z.string().max(1000).optional(),
    drop_settings: dropSettings.optional(),
    max_uploads: z.number().int().min(1).max(1_000_000_000).optional(),
  })
  .refine((b) => !(b.pin && b.password), { message: 'give either pin or password', path: ['pin'] });

const mailBody = z.object({
  token: z.string().min(16).max(64).optional(),
  id: z.number().int().positive().optional(),
  email: z.string().max(10_000).optional(),
  emails: z.array(z.string().max(320)).max(100).optional(),
  mode: z.enum(['drop', 'link']).optional(),
  message: z.string().max(2000).optional(),
  lang: z.string().max(5).optional(),
});

/** Recipients of one share-mail call. */
const MAX_RECIPIENTS = 50;

export function shareRoutes(d: { shares: Shares; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>();
  const { service } = d.shares;

  r.post('/api/files/share', doc({ summary: 'Create a link or a file request', body: createBody }), requireUser, async (ctx) => {
    const b = validate(createBody, await readObject(ctx, d.maxJsonBytes));
    let ttlMs: number | undefined;
    if (b.ttl !== undefined) {
      const ms = parseDuration(b.ttl);
      if (ms === null || ms <= 0) throw new AppError('validation_failed', { field: 'ttl', reason: 'a duration such as 24h or 7d' }, { field: 'ttl' });
      ttlMs = ms;
    }
    ctx.body = await service.create(actor(ctx), { ...b, ttlMs }, linkOrigin(ctx));
  });

  r.get('/api/files/share', doc({ summary: 'My links and file requests' }), requireUser, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { shares: await service.list(actor(ctx), linkOrigin(ctx)) };
  });

  r.delete('/api/files/share/:id', doc({ summary: 'Revoke a link (owner or admin)' }), requireUser, async (ctx) => {
    ctx.body = await service.revoke(actor(ctx), ctx.params.id);
  });

  // Re-enables a link the uplink guard suspended (owner or admin; anyone else gets not_found).
  r.post('/api/files/share/:id/resume', doc({ summary: 'Re-enable a link the uplink guard suspended (owner or admin)' }), requireUser, async (ctx) => {
    ctx.body = await service.resume(actor(ctx), ctx.params.id);
  });

  r.post('/api/files/permissions/share-mail', doc({ summary: 'E-mail a link or file request to people', body: mailBody }), requireUser, async (ctx) => {
    const b = validate(mailBody, await readObject(ctx, d.maxJsonBytes));
    const row = b.token ? await service.repo.byToken(me(ctx), b.token) : b.id ? await service.repo.byId(me(ctx), b.id) : undefined;
    if (!b.token && !b.id) throw new AppError('validation_failed', { field: 'token' }, { field: 'token' });
    const p = me(ctx);
    if (!row || !service.manages(actor(ctx), row)) throw new AppError('not_found');
    if ((await service.stateOf(row)) !== 'active') throw new AppError('link_unavailable');
    const to = splitAddresses(b.email, b.emails);
    if (to.length === 0) throw new AppError('email_required');
    if (to.length > MAX_RECIPIENTS) throw new AppError('too_many', { max: MAX_RECIPIENTS }, { max: MAX_RECIPIENTS });
    const lang = isLang(b.lang) ? b.lang : ctx.state.lang;
    const drop = (b.mode ?? row.kind) === 'drop' && row.kind === 'drop';
    const params = {
      sender: p.username || p.email,
      name:
        service
          .sharePath(row)
          .replace(/^.*:\/\//, '')
          .split('/')
          .pop() || service.sharePath(row),
      url: service.sentUrlOf(row, linkOrigin(ctx)),
      expiry: row.expires_at ? pt(lang, 'mail.expiry', { date: publicDate(lang, row.expires_at) }) : '',
      message: b.message ? `\n${b.message}\n` : '',
    };
    const res = await d.shares.mailer.send(to, {
      subject: pt(lang, drop ? 'mail.drop.subject' : 'mail.share.subject', params),
      text: pt(lang, drop ? 'mail.drop.body' : 'mail.share.body', params),
    });
    ctx.body = { emailed: res.sent.length > 0, sent: res.sent, failed: res.failed };
  });
  return r;
}
