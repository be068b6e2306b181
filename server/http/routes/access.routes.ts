/**
 * A person's ways in: API keys (`/api/auth/keys`), sessions
 * (`/api/auth/sessions`), device pairing (`POST /api/auth/desktop/complete`),
 * and the admin's view of someone's keys and sessions
 * (`/api/admin/users/:id/keys|sessions`). Every route here needs a browser
 * session (key-scope: a key cannot mint or list keys). See docs/auth.md.
 */
import Router from '@koa/router';
import { AppError, isAppError } from '../../errors';
import { checkVerbs, keyView, personActor, scopeOf, type Auth, type KeyRow, type KeyScope, type Principal, type Verb } from '../../auth';
import type { Catalogue } from '../../catalogue';
import type { TenantScope } from '../../db';
import type { ApiKeyCreated, ApiKeyView, KeyIdentity, SessionView } from '../../contract';
import type { EventBus } from '../../events';
import type { FileService } from '../../files';
import { uiPath } from '../../lib/paths';
import { readObject } from '../middlewares/body';
import { clearSessionCookie, requireAdmin, requireUser } from '../middlewares/auth';
import { validate, z } from '../validate';
import { me, reqMeta, type AppState, type Ctx } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Auth: keys and sessions', 'user');

export interface AccessRoutesDeps {
  auth: Auth;
  bus: EventBus;
  files: FileService;
  catalogue: Catalogue;
  maxJsonBytes: number;
  secureCookies: boolean;
}

/** A paired phone's key lives this long unless the pairing says otherwise. */
export const PAIRING_DAYS = 30;
const MAX_DAYS = 3650;

const newKey = z.strictObject({
  name: z.string().trim().min(1).max(100),
  verbs: z.array(z.string().max(40)).min(1).max(10),
  root: z.string().max(4096).nullable().optional(),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  expires_in_days: z.number().int().min(1).max(MAX_DAYS).optional(),
});
const pairing = z.strictObject({
  machine_id: z.string().min(8).max(200).optional(),
  label: z.string().trim().min(1).max(100).default('Desktop'),
  root: z.string().max(4096).optional(),
  verbs: z.array(z.string().max(40)).min(1).max(10).optional(),
  expires_in_days: z.number().int().min(1).max(MAX_DAYS).optional(),
});

const idParam = (raw: string | undefined): number => {
  if (!/^\d{1,12}$/.test(raw ?? '') || Number(raw) <= 0) throw new AppError('bad_id');
  return Number(raw);
};

/** A key's root as a UI path (its storage's current name, in the key's tenant), or null. */
const rootPath = (catalogue: Catalogue, t: TenantScope, root: KeyScope['root']): string | null => {
  const s = root && catalogue.repo.byId(t, root.storage_id);
  return s ? uiPath(s.name, root.rel) : null;
};

/** Presents key rows with their root as a UI path. */
export function keyViewer(catalogue: Catalogue): (row: KeyRow) => ApiKeyView {
  return (row) => keyView(row, rootPath(catalogue, row, scopeOf(row).root));
}

/** What `GET /api/auth/me` says about the key a request of tenant `t` was signed with. */
export function keyIdentity(catalogue: Catalogue): (t: TenantScope, key: KeyScope) => KeyIdentity {
  return (t, key) => ({ id: key.id, name: key.name, verbs: key.verbs, root: rootPath(catalogue, t, key.root), expires_at: key.expires_at });
}

/** What both routers share: presenting keys, minting them from a checked request, listing sessions, auditing. */
function tools(d: AccessRoutesDeps) {
  const body = (ctx: Ctx) => readObject(ctx, d.maxJsonBytes);

  /** The root folder a key for `owner` may be confined to: an existing folder the owner can open. */
  const rootOf = async (owner: Principal, root: string): Promise<KeyScope['root']> => {
    const fa = d.files.forActor(personActor(owner));
    try {
      const t = fa.target(root, 'viewer');
      if ((await fa.stat(t.place)).type !== 'dir')
        throw new AppError('validation_failed', { field: 'root', reason: 'not a folder' }, { field: 'root', reason: 'not a folder' });
      return t.place;
    } catch (e) {
      if (isAppError(e) && e.code === 'validation_failed') throw e;
      const reason = isAppError(e) && (e.code === 'not_found' || e.code === 'forbidden') ? 'no such folder' : isAppError(e) ? e.code : 'unreadable';
      throw new AppError('validation_failed', { field: 'root', reason }, { field: 'root', reason });
    }
  };

  const expiryOf = (b: { expires_at?: string | null; expires_in_days?: number }, fallbackDays: number | null): string | null => {
    if (b.expires_at && b.expires_in_days !== undefined)
      throw new AppError('validation_failed', { field: 'expires_at', reason: 'give expires_at or expires_in_days' }, { field: 'expires_at' });
    if (b.expires_at) {
      const at = Date.parse(b.expires_at);
      if (at <= Date.now()) throw new AppError('validation_failed', { field: 'expires_at', reason: 'in the past' }, { field: 'expires_at' });
      if (at > Date.now() + MAX_DAYS * 86_400_000)
        throw new AppError('validation_failed', { field: 'expires_at', reason: `at most ${MAX_DAYS} days ahead` }, { field: 'expires_at' });
      return new Date(at).toISOString();
    }
    const days = b.expires_in_days ?? fallbackDays;
    return days === null ? null : new Date(Date.now() + days * 86_400_000).toISOString();
  };

  const view = keyViewer(d.catalogue);

  /** Makes a key for `ownerId` from a checked request: verbs known, root a folder the owner can open, admin never with a root. */
  const mint = async (
    ctx: Ctx,
    ownerId: number,
    input: { name: string; verbs: Verb[]; root?: string | null; expiresAt: string | null },
  ): Promise<ApiKeyCreated> => {
    const owner = await d.auth.repo.principal(me(ctx), ownerId);
    if (!owner) throw new AppError('not_found', { id: ownerId });
    if (input.verbs.includes('admin') && input.root)
      throw new AppError('validation_failed', { field: 'verbs', reason: 'an admin key cannot have a root' }, { field: 'verbs' });
    const root = input.root ? await rootOf(owner, input.root) : null;
    const { key, token } = await d.auth.keys.create(
      me(ctx),
      { userId: ownerId, name: input.name, verbs: input.verbs, root, expiresAt: input.expiresAt },
      reqMeta(ctx),
    );
    return { key: view(key), token, s3: d.auth.keys.s3Credentials(key) };
  };

  const sessionsOf = async (ctx: Ctx, userId: number): Promise<SessionView[]> =>
    (await d.auth.sessions.list(me(ctx), userId)).map((s) => ({ ...s, current: s.id === me(ctx).sessionId }));

  const audit = (ctx: Ctx, action: string, userId: number, meta: Record<string, unknown>) => {
    const p = me(ctx);
    return d.bus.emit(p, 'audit', { action, actor: { id: p.id, email: p.email }, request: reqMeta(ctx), resource: `user:${userId}`, meta });
  };

  return { body, expiryOf, view, mint, sessionsOf, audit };
}

export function accessRoutes(d: AccessRoutesDeps): Router<AppState> {
  const r = new Router<AppState>();
  const { body, expiryOf, view, mint, sessionsOf, audit } = tools(d);

  r.get('/api/auth/keys', doc({ summary: 'My API keys' }), requireUser, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { keys: (await d.auth.keys.list(me(ctx), me(ctx).id)).map(view) };
  });

  r.post(
    '/api/auth/keys',
    doc({ summary: 'Create an API key (verbs, optional folder root and expiry); the secret is shown once', body: newKey }),
    requireUser,
    async (ctx) => {
      const b = validate(newKey, await body(ctx));
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 201;
      ctx.body = await mint(ctx, me(ctx).id, { name: b.name, verbs: checkVerbs(b.verbs), root: b.root, expiresAt: expiryOf(b, null) });
    },
  );

  r.delete('/api/auth/keys/:id', doc({ summary: 'Revoke one of my API keys' }), requireUser, async (ctx) => {
    const id = idParam(ctx.params.id);
    const row = await d.auth.keys.byId(me(ctx), id);
    const p = me(ctx);
    if (!row || (row.user_id !== p.id && p.role !== 'admin')) throw new AppError('not_found', { id });
    ctx.body = { key: view(await d.auth.keys.revoke(p, id, reqMeta(ctx))) };
  });

  r.get('/api/auth/sessions', doc({ summary: 'My signed-in sessions' }), requireUser, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { sessions: await sessionsOf(ctx, me(ctx).id) };
  });

  /** Signs one of the caller's sessions out (their current one too: then the cookie goes). */
  r.delete('/api/auth/sessions/:id', doc({ summary: 'Sign out one of my sessions' }), requireUser, async (ctx) => {
    const p = me(ctx);
    const sid = String(ctx.params.id ?? '');
    if (!(await d.auth.sessions.revokeOf(p, p.id, sid))) throw new AppError('not_found');
    if (sid === p.sessionId) clearSessionCookie(ctx, d.secureCookies);
    await audit(ctx, 'auth.session_revoke', p.id, { sessions: 1 });
    ctx.body = { ok: true };
  });

  r.post('/api/auth/sessions/revoke-others', doc({ summary: 'Sign out all my other sessions' }), requireUser, async (ctx) => {
    const p = me(ctx);
    const ended = await d.auth.sessions.revokeOthers(p, p.id, p.sessionId);
    await audit(ctx, 'auth.session_revoke', p.id, { sessions: ended, others: true });
    ctx.body = { ok: true, revoked: ended };
  });

  /**
   * Pairing. With `machine_id`: the key a desktop shell signs in with
   * (docs/server-host-protocol.md). Without it: a phone's key, confined to
   * `root`, with `verbs` (default read and write), expiring after
   * `expires_in_days` (default PAIRING_DAYS); the tray shows it as a QR code.
   */
  r.post('/api/auth/desktop/complete', doc({ summary: 'Mint the key a desktop client pairs with', body: pairing }), requireUser, async (ctx) => {
    const b = validate(pairing, await body(ctx));
    if (b.machine_id !== undefined) {
      if (b.root !== undefined || b.verbs !== undefined)
        throw new AppError('validation_failed', { field: 'root', reason: 'a desktop key has no root or verbs' }, { field: 'root' });
      ctx.body = await d.auth.auth.desktopComplete(me(ctx), b.machine_id, b.label, reqMeta(ctx));
      return;
    }
    if (!b.root) throw new AppError('validation_failed', { field: 'root', reason: 'a paired device is confined to a folder' }, { field: 'root' });
    const verbs = checkVerbs(b.verbs ?? PAIRED_VERBS);
    // A paired device works with files in its folder; links, the assistant and admin need a key made on purpose.
    if (verbs.some((v) => !PAIRED_VERBS.includes(v)))
      throw new AppError('validation_failed', { field: 'verbs', reason: `a paired device holds ${PAIRED_VERBS.join(' and/or ')} only` }, { field: 'verbs' });
    const made = await mint(ctx, me(ctx).id, { name: b.label, verbs, root: b.root, expiresAt: expiryOf(b, PAIRING_DAYS) });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ...made, key_id: made.key.id };
  });

  return r;
}

const PAIRED_VERBS: readonly Verb[] = ['files:read', 'files:write'];

/** An admin's view of someone's keys and sessions. */
export function adminAccessRoutes(d: AccessRoutesDeps): Router<AppState> {
  const admin = new Router<AppState>({ prefix: '/api/admin/users/:id' });
  admin.use(requireAdmin);
  const { body, expiryOf, view, mint, sessionsOf, audit } = tools(d);
  const userOf = async (ctx: Ctx) => {
    const id = idParam(ctx.params.id);
    if (!(await d.auth.repo.byId(me(ctx), id))) throw new AppError('not_found', { id });
    return id;
  };
  admin.get('/keys', doc({ summary: 'An account’s API keys', auth: 'admin' }), async (ctx) => {
    ctx.body = { keys: (await d.auth.keys.list(me(ctx), await userOf(ctx))).map(view) };
  });
  admin.post('/keys', doc({ summary: 'Create an API key for an account', body: newKey, auth: 'admin' }), async (ctx) => {
    const id = await userOf(ctx);
    const b = validate(newKey, await body(ctx));
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = await mint(ctx, id, { name: b.name, verbs: checkVerbs(b.verbs), root: b.root, expiresAt: expiryOf(b, null) });
  });
  admin.get('/sessions', doc({ summary: 'An account’s sessions', auth: 'admin' }), async (ctx) => {
    ctx.body = { sessions: await sessionsOf(ctx, await userOf(ctx)) };
  });
  admin.delete('/sessions/:sid', doc({ summary: 'Sign out one session of an account', auth: 'admin' }), async (ctx) => {
    const id = await userOf(ctx);
    if (!(await d.auth.sessions.revokeOf(me(ctx), id, String(ctx.params.sid ?? '')))) throw new AppError('not_found');
    await audit(ctx, 'auth.session_revoke', id, { sessions: 1 });
    ctx.body = { ok: true };
  });
  admin.delete('/sessions', doc({ summary: 'Sign out every session of an account', auth: 'admin' }), async (ctx) => {
    const id = await userOf(ctx);
    const ended = (await d.auth.sessions.list(me(ctx), id)).length;
    await d.auth.sessions.revokeUser(me(ctx), id);
    await audit(ctx, 'auth.session_revoke', id, { sessions: ended, all: true });
    ctx.body = { ok: true, revoked: ended };
  });
  return admin;
}
