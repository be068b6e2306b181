/** /api/admin/users, /api/admin/auth/settings (sign-up) and /api/admin/audit. */
import Router from '@koa/router';
import { AppError } from '../../errors';
import { ROLES, type Auth } from '../../auth';
import { queryAudit } from '../../audit';
import type { Db } from '../../db';
import type { EventBus } from '../../events';
import type { SettingsStore } from '../../settings';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { languageId, q, validate, z } from '../validate';
import { actorOf, me, reqMeta, type AppState, type Ctx } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: users', 'admin');

const role = z.enum(ROLES as [string, ...string[]]);
const createUser = z.object({
  email: z.string().max(320),
  username: z.string().max(64).optional(),
  role: role.default('user'),
  password: z.string().max(1024).optional(),
  language: languageId().nullable().optional(),
  groups: z.array(z.string().min(1).max(64)).max(100).optional(),
});
const updateUser = z
  .object({
    email: z.string().max(320),
    username: z.string().max(64),
    role,
    disabled: z.boolean(),
    password: z.string().max(1024),
    language: languageId().nullable(),
    groups: z.array(z.string().min(1).max(64)).max(100),
    quota_bytes: z.number().int().min(0).nullable(),
    custom_role_id: z.number().int().positive().nullable(),
  })
  .partial()
  .strict();
const signupSettings = z.strictObject({ allow_signup: z.boolean() });
const listQuery = z.object({ q: q.str(200).optional(), role: role.optional(), limit: q.int(1, 1000).optional(), offset: q.int().optional() });
const auditQuery = z.object({
  user_id: q.int(1).optional(),
  action: q.str(100).optional(),
  from: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
  to: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
  limit: q.int(1, 1000).default(100),
  offset: q.int().optional(),
});

const idParam = (ctx: Ctx): number => {
  const id = Number(ctx.params.id);
  if (!/^\d+$/.test(ctx.params.id ?? '') || id <= 0) throw new AppError('bad_id');
  return id;
};

export function adminUserRoutes(d: { auth: Auth; db: Db; settings: SettingsStore; bus: EventBus; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin' });
  r.use(requireAdmin);
  const ctxOf = (ctx: Ctx) => ({ actor: actorOf(ctx), request: reqMeta(ctx) });

  r.get('/users', doc({ summary: 'List accounts (search, role filter, paging)', query: listQuery }), async (ctx) => {
    const f = validate(listQuery, ctx.query);
    ctx.body = { users: await d.auth.users.list(me(ctx), f as never) };
  });
  r.post('/users', doc({ summary: 'Create an account (omit password for single sign-on accounts)', body: createUser }), async (ctx) => {
    const b = validate(createUser, await readObject(ctx, d.maxJsonBytes));
    ctx.body = { user: await d.auth.users.create(me(ctx), b as never, ctxOf(ctx)) };
  });
  r.get('/users/:id', doc({ summary: 'One account' }), async (ctx) => {
    ctx.body = { user: await d.auth.users.get(me(ctx), idParam(ctx)) };
  });
  const update = async (ctx: Ctx) => {
    const b = validate(updateUser, await readObject(ctx, d.maxJsonBytes));
    ctx.body = { user: await d.auth.users.update(me(ctx), idParam(ctx), b as never, ctxOf(ctx)) };
  };
  r.put('/users/:id', doc({ summary: 'Change an account: role, disabled, password reset (partial)', body: updateUser }), update);
  r.patch('/users/:id', doc({ summary: 'Change an account (partial)', body: updateUser }), update);
  r.delete('/users/:id', doc({ summary: 'Delete an account' }), async (ctx) => {
    await d.auth.users.delete(me(ctx), idParam(ctx), ctxOf(ctx));
    ctx.body = { ok: true };
  });
  r.post('/users/:id/disable', doc({ summary: 'Disable an account (signs it out everywhere)' }), async (ctx) => {
    ctx.body = { user: await d.auth.users.update(me(ctx), idParam(ctx), { disabled: true }, ctxOf(ctx)) };
  });
  r.post('/users/:id/enable', doc({ summary: 'Enable an account' }), async (ctx) => {
    ctx.body = { user: await d.auth.users.update(me(ctx), idParam(ctx), { disabled: false }, ctxOf(ctx)) };
  });

  // Account settings: whether anyone may sign up at the sign-in page.
  r.get('/auth/settings', doc({ summary: 'Account settings: whether anyone may sign up', tag: 'Admin: sign-in' }), (ctx) => {
    ctx.body = { allow_signup: d.settings.get('allow_signup') };
  });
  r.patch('/auth/settings', doc({ summary: 'Open or close self sign-up', body: signupSettings, tag: 'Admin: sign-in' }), async (ctx) => {
    const b = validate(signupSettings, await readObject(ctx, d.maxJsonBytes));
    const from = d.settings.get('allow_signup');
    if (from !== b.allow_signup) {
      await d.settings.set('allow_signup', b.allow_signup);
      await d.bus.emit(me(ctx), 'audit', {
        action: 'admin.config_change',
        actor: actorOf(ctx),
        request: reqMeta(ctx),
        resource: 'auth',
        meta: { changes: { allow_signup: { from, to: b.allow_signup } } },
      });
    }
    ctx.body = { allow_signup: b.allow_signup };
  });

  r.get('/audit', doc({ summary: 'The audit log (filters and paging)', query: auditQuery, tag: 'Admin: audit' }), async (ctx) => {
    const f = validate(auditQuery, ctx.query);
    // The admin's tenant's log (the platform operator's read of every tenant is step 2's).
    ctx.body = { events: await queryAudit(d.db, me(ctx), f) };
  });
  return r;
}
