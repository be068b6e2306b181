/**
 * The app store over HTTP (docs/app-store.md, "Routes"): store connections,
 * the catalogue, and installs, upgrades and uninstalls from it, under
 * /api/admin/app-store. Admin only and session only (key-scope answers an API
 * key `session_required` before these run); every route answers 503
 * `app_store_disabled` while the store is off, except its own switch.
 */
import Router from '@koa/router';
import { AppError } from '../../errors';
import type { EventBus } from '../../events';
import type { SettingsStore } from '../../settings';
import { CATEGORIES, type AppStore, type InstallRequest, type StoreInstallOps, type StoreLicences, type StoreUpdates } from '../../store';
import { requireAdmin } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { actor, actorOf, me, reqMeta, type AppState, type Ctx, type Mw } from '../context';
import { validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('App store', 'admin');

const connectBody = z.strictObject({ url: z.string().min(1).max(2048), public_key_pem: z.string().min(1).max(4096) });
const patchBody = z.strictObject({ enabled: z.boolean() });
const installBody = z.strictObject({
  store: z.number().int().min(1),
  version: z.string().max(64).optional(),
  approve_hosts: z.array(z.string().max(260)).max(32).optional(),
  approve_permissions: z.boolean().optional(),
});
const configBody = z.strictObject({ enabled: z.boolean() });
const licenceBody = z.strictObject({ store: z.number().int().min(1), code: z.string().min(1).max(200) });
const catalogueQuery = z.object({
  q: z.string().max(200).optional(),
  kind: z.enum(['app', 'language-pack', 'storage']).optional(),
  category: z.enum(CATEGORIES).optional(),
  updates: z.enum(['true', 'false']).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  offset: z.coerce.number().int().min(0).optional(),
});

export function appStoreRoutes(d: {
  store: AppStore;
  updates: StoreUpdates;
  licences: StoreLicences;
  installs: StoreInstallOps;
  settings: SettingsStore;
  bus: EventBus;
  maxJsonBytes: number;
  log: (msg: string, err?: unknown) => void;
}): Router<AppState> {
  const r = new Router<AppState>();
  const s = d.store;
  const A = '/api/admin/app-store';
  const admin: Mw = async (ctx, next) => {
    ctx.state.door = 'admin';
    await requireAdmin(ctx, next);
  };
  const on: Mw = async (ctx, next) => {
    s.requireOn();
    await next();
  };
  const body = async <T extends z.ZodType>(ctx: Ctx, schema: T) => validate(schema, await readObject(ctx, d.maxJsonBytes));
  /**
   * `Prefer: respond-async` (RFC 7240): the install or upgrade runs as an operation with its download's progress
   * (docs/app-store.md, "Installs as operations"); refusals that need nothing downloaded still answer at once.
   */
  const queued = async (ctx: Ctx, action: 'install' | 'upgrade', req: InstallRequest) => {
    if (!/\brespond-async\b/i.test(ctx.get('prefer'))) return false;
    ctx.status = 202;
    ctx.body = { operation_id: await d.installs.request(actor(ctx), action, req) };
    ctx.set('preference-applied', 'respond-async');
    return true;
  };
  const id = (ctx: Ctx) => {
    const n = Number(ctx.params.id);
    if (!Number.isInteger(n) || n < 1) throw new AppError('bad_id');
    return n;
  };

  r.get(`${A}/config`, doc({ summary: 'App store settings (enabled)', auth: 'admin' }), admin, (ctx) => {
    ctx.body = { enabled: d.settings.get('app_store_enabled') };
  });
  r.patch(`${A}/config`, doc({ summary: 'Turn the app store on or off', body: configBody, auth: 'admin' }), admin, async (ctx) => {
    const b = await body(ctx, configBody);
    await d.settings.set('app_store_enabled', b.enabled);
    await d.bus.emit(me(ctx), 'audit', {
      action: 'admin.config_change',
      actor: actorOf(ctx),
      request: reqMeta(ctx),
      resource: 'app_store',
      meta: { enabled: b.enabled },
    });
    ctx.body = { enabled: b.enabled };
  });
  r.get(`${A}/stores`, doc({ summary: 'Store connections', auth: 'admin' }), admin, on, async (ctx) => {
    ctx.body = await s.list();
  });
  r.post(
    `${A}/stores`,
    doc({
      summary: 'Connect a store by URL and the Ed25519 key trusted for its index (answers the key’s fingerprint)',
      body: connectBody,
      status: 201,
      auth: 'admin',
    }),
    admin,
    on,
    async (ctx) => {
      const b = await body(ctx, connectBody);
      ctx.status = 201;
      ctx.body = await s.connect(actor(ctx), b.url, b.public_key_pem);
    },
  );
  r.patch(`${A}/stores/:id`, doc({ summary: 'Enable or disable a store', body: patchBody, auth: 'admin' }), admin, on, async (ctx) => {
    ctx.body = await s.setEnabled(actor(ctx), id(ctx), (await body(ctx, patchBody)).enabled);
  });
  r.delete(`${A}/stores/:id`, doc({ summary: 'Disconnect a store', auth: 'admin' }), admin, on, async (ctx) => {
    ctx.body = await s.disconnect(actor(ctx), id(ctx));
  });
  r.post(`${A}/stores/:id/refresh`, doc({ summary: 'Fetch a store’s index again now (conditional GET)', auth: 'admin' }), admin, on, async (ctx) => {
    ctx.body = await s.refresh(id(ctx));
    // A fresh index may offer updates: the check rings the bell (or upgrades) after the answer, not within it.
    d.updates.check().catch((e) => d.log('app store update check failed', e));
  });
  const mediaQuery = z.object({ file: z.string().min(1).max(220) });
  r.get(
    `${A}/stores/:id/media`,
    doc({ summary: 'A picture the store’s index names (an icon or a screenshot), checked against its sha256', query: mediaQuery, auth: 'admin' }),
    admin,
    on,
    async (ctx) => {
      const pic = await s.media.get(me(ctx).id, id(ctx), validate(mediaQuery, ctx.query).file);
      ctx.set('content-type', pic.type);
      ctx.set('cache-control', 'private, max-age=3600');
      ctx.set('x-content-type-options', 'nosniff');
      ctx.set('content-security-policy', "default-src 'none'");
      ctx.body = pic.bytes;
    },
  );
  r.get(
    `${A}/catalogue`,
    doc({
      summary: 'A page of the entries of every enabled store, with the installed version and whether an update is available',
      query: catalogueQuery,
      auth: 'admin',
    }),
    admin,
    on,
    async (ctx) => {
      const qy = validate(catalogueQuery, ctx.query);
      ctx.body = await s.catalogue({ ...qy, updates: qy.updates === 'true' });
    },
  );
  r.post(
    `${A}/apps/:app/install`,
    doc({
      summary: 'Install an app, language pack or storage driver from a store (with Prefer: respond-async, 202 and an operation)',
      body: installBody,
      status: 201,
      auth: 'admin',
    }),
    admin,
    on,
    async (ctx) => {
      const b = { ...(await body(ctx, installBody)), id: ctx.params.app };
      if (await queued(ctx, 'install', b)) return;
      ctx.status = 201;
      ctx.body = await s.install(actor(ctx), b);
    },
  );
  r.post(
    `${A}/apps/:app/upgrade`,
    doc({
      summary: 'Upgrade an installed app, language pack or storage driver from a store (a new app permission needs approve_permissions)',
      body: installBody,
      auth: 'admin',
    }),
    admin,
    on,
    async (ctx) => {
      const b = { ...(await body(ctx, installBody)), id: ctx.params.app };
      if (await queued(ctx, 'upgrade', b)) return;
      ctx.body = await s.upgrade(actor(ctx), b);
    },
  );
  r.delete(
    `${A}/apps/:app`,
    doc({ summary: 'Uninstall an app, language pack or storage driver (a driver storages use is refused: intent_in_use)', auth: 'admin' }),
    admin,
    on,
    async (ctx) => {
      ctx.body = await s.uninstall(actor(ctx), ctx.params.app);
    },
  );
  r.get(`${A}/auto-updates`, doc({ summary: 'The installed apps that update themselves', auth: 'admin' }), admin, on, async (ctx) => {
    ctx.body = { apps: await d.updates.autoUpdating() };
  });
  r.put(
    `${A}/apps/:app/auto-update`,
    doc({ summary: 'Let an installed app update itself (never across a major version or to a new permission), or not', body: patchBody, auth: 'admin' }),
    admin,
    on,
    async (ctx) => {
      ctx.body = await d.updates.setAuto(actor(ctx), ctx.params.app, (await body(ctx, patchBody)).enabled);
    },
  );
  r.post(
    `${A}/updates/check`,
    doc({ summary: 'Compare the installed apps with the stores now (as the daily check does)', auth: 'admin' }),
    admin,
    on,
    async (ctx) => {
      ctx.body = await d.updates.check();
    },
  );
  // Licences online (docs/app-store.md, "Licences online").
  r.post(
    `${A}/apps/:app/license`,
    doc({ summary: 'Fetch a paid app’s licence from its store by purchase code, and set it', body: licenceBody, auth: 'admin' }),
    admin,
    on,
    async (ctx) => {
      const b = await body(ctx, licenceBody);
      ctx.body = await d.licences.fetch(actor(ctx), ctx.params.app, b.store, b.code);
    },
  );
  r.post(
    `${A}/revocations/refresh`,
    doc({ summary: 'Read every store’s licence revocation list now (as the daily refresh does)', auth: 'admin' }),
    admin,
    on,
    async (ctx) => {
      ctx.body = { stores: await d.licences.refreshAll() };
    },
  );
  // Language packs install and upgrade through the routes above (the entry's kind decides); removing one is its own route.
  r.delete(
    `${A}/language-packs/:lang`,
    doc({ summary: 'Uninstall a language pack (its readers fall back to English)', auth: 'admin' }),
    admin,
    on,
    async (ctx) => {
      ctx.body = await s.uninstallLanguage(actor(ctx), ctx.params.lang);
    },
  );
  return r;
}
