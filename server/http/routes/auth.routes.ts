/** /api/auth/*: login, logout, me, account checks, signup, first-run setup, desktop sign-in (pairing itself: access.routes). */
import Router from '@koa/router';
import { AppError } from '../../errors';
import { verifyPassword, type Auth, type KeyScope } from '../../auth';
import type { KeyIdentity } from '../../contract';
import { DEFAULT_TENANT, type TenantScope } from '../../db';
import { suggestedFirstStorage, type FirstStorage } from '../../catalogue';
import { isLang } from '../../lib/i18n';
import { readObject } from '../middlewares/body';
import { clearSessionCookie, requireUser, setSessionCookie } from '../middlewares/auth';
import { languageId, validate, z } from '../validate';
import { relyingParty } from '../relying-party';
import { actorOf, me, reqMeta, type AppState, type Ctx } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Auth', 'public');

export interface AuthRoutesDeps {
  auth: Auth;
  secureCookies: boolean;
  maxJsonBytes: number;
  /** SERVICE_PUBLIC_URL ('' when unset), for the passkey options of a second step. */
  publicUrl: string;
  /** The key a request was signed with, as `GET /me` names it (from the resolved scope: no query). */
  keyIdentity: (t: TenantScope, key: KeyScope) => KeyIdentity;
  /** The set-up page's first storage (docs/ui.md, "First run"). */
  firstStorage: FirstStorage;
  /** The UI path of a person's home folder (files/homes.ts), or null: where the files page opens. */
  homeOf?: (userId: number) => Promise<string | null>;
  /** Multi-tenant mode: `GET /me` says who is a platform operator (single-tenant mode's answer is unchanged). */
  multiTenant?: boolean;
}

const login = z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) });
const setup = z.object({
  email: z.string().max(320),
  username: z.string().max(64).optional(),
  password: z.string().max(1024),
  storage_path: z.string().max(4096).optional(),
});
const signup = z.strictObject({
  email: z.string().max(320),
  username: z.string().max(64).optional(),
  password: z.string().max(1024),
  language: languageId().nullable().optional(),
});
const accountCheck = z.object({ email: z.string().max(320).optional(), username: z.string().max(128).optional(), user_id: z.number().int().optional() });
const mePatch = z
  .object({ language: z.string().nullable().optional(), password: z.string().max(1024).optional(), current_password: z.string().max(1024).optional() })
  .strict();
const desktopLogin = z.object({ key: z.string().min(10).max(200), machine_id: z.string().min(8).max(200) });
const bootstrap = z.object({ secret: z.string().min(1).max(200) });

export function authRoutes(d: AuthRoutesDeps): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/auth' });
  const body = (ctx: Ctx) => readObject(ctx, d.maxJsonBytes);
  const signIn = (ctx: Ctx, res: { token: string; expires_at: string }) => setSessionCookie(ctx, res.token, res.expires_at, d.secureCookies);

  r.post('/login', doc({ summary: 'Sign in with e-mail and password (sets the session cookie, returns a token)', body: login }), async (ctx) => {
    const b = validate(login, await body(ctx));
    const res = await d.auth.auth.login(ctx.state.tenant, b.email, b.password, reqMeta(ctx), relyingParty(ctx, d.publicUrl));
    // An account with a second factor gets its challenge and no cookie yet (POST /api/auth/login/mfa).
    if ('token' in res) signIn(ctx, res);
    ctx.body = res;
  });

  r.post('/logout', doc({ summary: 'Sign out: ends this session', auth: 'user' }), requireUser, async (ctx) => {
    await d.auth.auth.logout(me(ctx), reqMeta(ctx));
    clearSessionCookie(ctx, d.secureCookies);
    ctx.body = { ok: true };
  });

  r.get('/me', doc({ summary: 'The signed-in account', auth: 'user' }), requireUser, async (ctx) => {
    const p = me(ctx);
    const key = ctx.state.key;
    const home = (await d.homeOf?.(p.id)) ?? null;
    ctx.body = {
      user: {
        id: p.id,
        email: p.email,
        username: p.username,
        role: p.role,
        groups: p.groups,
        language: p.language,
        home,
        ...(key && { key: d.keyIdentity(p, key) }),
        ...(d.multiTenant && p.platform_operator && { platform_operator: true }),
      },
    };
  });

  r.patch('/me', doc({ summary: 'Change my language or password', body: mePatch, auth: 'user' }), requireUser, async (ctx) => {
    const b = validate(mePatch, await body(ctx));
    const p = me(ctx);
    if (b.language !== undefined && b.language !== null && !isLang(b.language))
      throw new AppError('validation_failed', { field: 'language' }, { field: 'language' });
    if (b.password !== undefined) {
      const row = (await d.auth.repo.byId(p, p.id))!;
      if (row.password_hash && !(await verifyPassword(b.current_password ?? '', row.password_hash)))
        throw new AppError('validation_failed', { field: 'current_password' }, { field: 'current_password' });
    }
    const u = await d.auth.users.update(p, p.id, { language: b.language, password: b.password }, { actor: actorOf(ctx), request: reqMeta(ctx) });
    ctx.body = { user: { id: u.id, email: u.email, username: u.username, role: u.role, groups: u.groups, language: u.language } };
  });

  // Live checks while a form is typed: 200 {ok: true} or the spec's account error code.
  r.post('/account/check', doc({ summary: 'Check an e-mail or username while it is typed', body: accountCheck, auth: 'user' }), requireUser, async (ctx) => {
    const b = validate(accountCheck, await body(ctx));
    // An admin sees every account anyway; anyone else spends from the address's probe budget.
    if (me(ctx).role !== 'admin') await d.auth.auth.probe(ctx.state.ip);
    const except = me(ctx).role === 'admin' ? b.user_id : me(ctx).id;
    if (b.email === undefined && b.username === undefined) throw new AppError('validation_failed', { field: 'email' }, { field: 'email' });
    if (b.email !== undefined) await d.auth.users.checkEmail(me(ctx), b.email, except);
    if (b.username !== undefined) await d.auth.users.checkUsername(me(ctx), b.username, except);
    ctx.body = { ok: true };
  });

  r.post('/signup', doc({ summary: 'Create an account when self sign-up is open', body: signup, status: 201 }), async (ctx) => {
    const b = validate(signup, await body(ctx));
    const res = await d.auth.auth.signup(ctx.state.tenant, b, reqMeta(ctx));
    signIn(ctx, res);
    ctx.status = 201;
    ctx.body = res;
  });

  r.get('/setup', doc({ summary: 'Whether first-run setup is needed (and, from this computer, a suggested first storage)' }), async (ctx) => {
    const needed = await d.auth.auth.setupNeeded(ctx.state.tenant);
    // Only the local owner, before any account or storage exists, learns the service's home folder (tenant 1's).
    const offer = needed && ctx.state.loopback && ctx.state.tenant.tenant_id === DEFAULT_TENANT.tenant_id && d.firstStorage.offered();
    ctx.body = { needed, local: ctx.state.loopback, ...(offer && { storage: { suggested_path: suggestedFirstStorage() } }) };
  });

  r.post(
    '/setup',
    doc({
      summary: 'First run: create the first admin (and optionally the first storage)',
      body: setup,
      description: 'Only before any account exists, and only from the local machine.',
    }),
    async (ctx) => {
      const b = validate(setup, await body(ctx));
      // Optional: without a folder the service starts with the storages the environment gave it (maybe none).
      const path = b.storage_path?.trim() || undefined;
      // The first storage is the installation's (tenant 1's): another tenant's admin adds storages in the admin console.
      if (path !== undefined && ctx.state.tenant.tenant_id !== DEFAULT_TENANT.tenant_id)
        throw new AppError('validation_failed', { field: 'storage_path' }, { field: 'storage_path' });
      const res = await d.auth.auth.setup(ctx.state.tenant, b, reqMeta(ctx), path === undefined ? undefined : () => d.firstStorage.check(path));
      const storage =
        path === undefined ? undefined : await d.firstStorage.create(path, { actor: { id: res.user.id, email: res.user.email }, request: reqMeta(ctx) });
      signIn(ctx, res);
      ctx.body = { ...res, ...(storage && { storage: { id: storage.id, name: storage.name } }) };
    },
  );

  r.post('/desktop/bootstrap', doc({ summary: 'The desktop shell signs its owner in with the secret it was started with', body: bootstrap }), async (ctx) => {
    const b = validate(bootstrap, await body(ctx));
    const res = await d.auth.auth.desktopBootstrap(b.secret, reqMeta(ctx));
    signIn(ctx, res);
    ctx.body = res;
  });

  r.post('/desktop/login', doc({ summary: 'A paired desktop client signs in with its device key', body: desktopLogin }), async (ctx) => {
    const b = validate(desktopLogin, await body(ctx));
    const res = await d.auth.auth.desktopLogin(b.key, b.machine_id, reqMeta(ctx));
    signIn(ctx, res);
    ctx.body = res;
  });

  r.get('/desktop/keys', doc({ summary: 'My paired desktop devices', auth: 'user' }), requireUser, async (ctx) => {
    ctx.body = { keys: await d.auth.auth.listDeviceKeys(me(ctx)) };
  });

  r.delete('/desktop/keys/:id', doc({ summary: 'Unpair a desktop device', auth: 'user' }), requireUser, async (ctx) => {
    const id = Number(ctx.params.id);
    if (!Number.isInteger(id) || id <= 0) throw new AppError('bad_id');
    await d.auth.auth.revokeDeviceKey(me(ctx), id, reqMeta(ctx));
    ctx.body = { ok: true };
  });

  return r;
}
