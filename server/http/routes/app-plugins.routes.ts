/**
 * App plugins over HTTP (SPEC App plugins; docs/app-plugins.md). The user
 * routes under /api/files/plugins answer on the `app` door (`read_only` 409,
 * `quota_exceeded` 507); the admin routes under /api/admin/app-plugins are
 * session-only (an API key gets 403 `session_required`, http/middlewares/key-scope).
 */
import Router from '@koa/router';
import { AppError } from '../../errors';
import type { EventBus } from '../../events';
import { PACKAGE_LIMITS, RUN_LIMITS, type AppPlugins } from '../../plugins';
import type { SettingsStore } from '../../settings';
import { requireAdmin, requireUser } from '../middlewares/auth';
import { readObject } from '../middlewares/body';
import { actor, actorOf, me, reqMeta, type AppState, type Ctx, type Mw } from '../context';
import { validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('App plugins', 'user');

/** A run names up to 500 paths beside its 64 KiB of params; the params cap itself is checked by the service (413). */
const RUN_BODY_BYTES = 4 * 1024 * 1024;
const asList = (v: unknown): string[] | undefined => (v === undefined ? undefined : Array.isArray(v) ? v.map(String) : [String(v)]);

/** Reads a package upload (the ZIP as the raw body) up to the package cap. */
async function readPackage(ctx: Ctx): Promise<Buffer> {
  if (!ctx.is('application/zip', 'application/octet-stream')) throw new AppError('bad_body', {}, { reason: 'send the package as application/zip' });
  const max = PACKAGE_LIMITS.package_bytes;
  if (Number(ctx.get('content-length') || 0) > max) throw new AppError('payload_too_large', { max }, { max });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of ctx.req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > max) {
      ctx.req.resume();
      throw new AppError('payload_too_large', { max }, { max });
    }
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

/** One path or several (query strings never fail these: they name the parameters). */
const paths = z.union([z.string(), z.array(z.string())]).optional();
const actionsQuery = z.object({ path: paths });
const viewQuery = z.object({ path: paths, section: z.string().optional().catch(undefined) });
const usersQuery = z.object({ plugin: paths, q: paths });
const installQuery = z.object({ approve_hosts: paths });
/** The action service checks these (paths, params size) with its own codes; every key passes here. */
const runBody = z.looseObject({ paths: z.unknown().optional().describe('adapter-qualified paths, one storage'), params: z.unknown().optional() });
const eventBody = z.looseObject({
  paths: z.unknown().optional(),
  state: z.unknown().optional(),
  event: z.unknown().optional().describe('open, change, action or submit'),
  action_id: z.unknown().optional(),
  data: z.unknown().optional(),
});
const patchBody = z.strictObject({
  enabled: z.boolean().optional(),
  settings: z.record(z.string(), z.unknown()).optional(),
  approved_hosts: z.array(z.string().max(260)).max(32).optional(),
});
const keyBody = z.strictObject({ publisher: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/), public_key_pem: z.string().min(1).max(4096) });
const configBody = z.strictObject({ enabled: z.boolean() });
const licenseBody = z.strictObject({ token: z.string().min(1).max(8192) });
const storeKeyBody = z.strictObject({ store: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/), public_key_pem: z.string().min(1).max(4096) });
const revokeBody = z.strictObject({ license_id: z.string().min(1).max(200), note: z.string().max(500).optional() });

export function appPluginRoutes(d: { plugins: AppPlugins; settings: SettingsStore; bus: EventBus; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>();
  const p = d.plugins;
  const door: Mw = async (ctx, next) => {
    ctx.state.door = 'app';
    await next();
  };

  // The user side.
  const U = '/api/files/plugins';
  r.get(`${U}/actions`, doc({ summary: 'The app actions and views offered for the given paths', query: actionsQuery }), door, requireUser, async (ctx) => {
    ctx.set('Cache-Control', 'private, max-age=300');
    ctx.body = await p.actions.list(actor(ctx), asList(validate(actionsQuery, ctx.query).path));
  });
  r.post(
    `${U}/actions/:plugin/:action/run`,
    doc({ summary: 'Run an app action on paths (202 with the op; 200 with a surface when the action opens a view)', body: runBody, status: 202 }),
    door,
    requireUser,
    async (ctx) => {
      const b = validate(runBody, await readObject(ctx, Math.max(RUN_BODY_BYTES, RUN_LIMITS.params_bytes)));
      const out = await p.actions.run(actor(ctx), ctx.state.lang, ctx.params.plugin, ctx.params.action, b);
      ctx.status = out.status;
      ctx.body = out.body;
    },
  );
  r.get(`${U}/views/:plugin/:view`, doc({ summary: 'Open an app view: its first surface', query: viewQuery }), door, requireUser, async (ctx) => {
    const qy = validate(viewQuery, ctx.query);
    const section = qy.section?.slice(0, 128);
    ctx.body = await p.actions.view(actor(ctx), ctx.state.lang, ctx.params.plugin, ctx.params.view, { path: asList(qy.path), section });
  });
  r.post(
    `${U}/views/:plugin/:view/event`,
    doc({ summary: 'Send a view event (open, change, action, submit); answers the next surface', body: eventBody }),
    door,
    requireUser,
    async (ctx) => {
      const b = validate(eventBody, await readObject(ctx, RUN_BODY_BYTES));
      const out = await p.actions.event(actor(ctx), ctx.state.lang, ctx.params.plugin, ctx.params.view, b);
      ctx.status = out.status;
      ctx.body = out.body;
    },
  );
  r.get(
    `${U}/users`,
    doc({ summary: 'People search for an app’s people picker (needs the lookup permission)', query: usersQuery }),
    door,
    requireUser,
    async (ctx) => {
      const qy = validate(usersQuery, ctx.query);
      ctx.body = await p.actions.users(actor(ctx), String(qy.plugin ?? ''), String(qy.q ?? ''));
    },
  );
  r.get(`${U}/license/:plugin`, doc({ summary: 'An app’s licence status' }), door, requireUser, async (ctx) => {
    ctx.body = await p.actions.license(me(ctx), ctx.params.plugin);
  });
  r.get(`${U}/icon/:plugin/:name`, doc({ summary: 'An app’s icon', produces: ['image/png', 'image/svg+xml'] }), door, requireUser, async (ctx) => {
    const name = ctx.params.name;
    ctx.body = await p.actions.icon(actor(ctx), ctx.params.plugin, name);
    // SVG icons are shown as images only: no script runs from them.
    ctx.type = name.endsWith('.svg') ? 'image/svg+xml' : 'image/png';
    ctx.set({
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
      'Cache-Control': 'private, max-age=3600',
      'X-Content-Type-Options': 'nosniff',
    });
  });

  // The admin side (session-only: key-scope answers `session_required` to a key before these run).
  const A = '/api/admin/app-plugins';
  const admin: Mw = async (ctx, next) => {
    ctx.state.door = 'admin';
    await requireAdmin(ctx, async () => {
      if (p.off() === 'plugins_disabled') throw new AppError('plugins_disabled');
      await next();
    });
  };
  const body = async <T extends z.ZodType>(ctx: Ctx, schema: T) => validate(schema, await readObject(ctx, d.maxJsonBytes));
  r.get(`${A}/apps`, doc({ summary: 'Installed apps', auth: 'admin' }), admin, async (ctx) => {
    ctx.body = await p.admin.list(me(ctx));
  });
  r.post(
    `${A}/apps`,
    doc({
      summary: 'Install an app package (ZIP body); `approve_hosts` approves the hosts it asks to reach',
      query: installQuery,
      consumes: 'application/zip',
      status: 201,
      auth: 'admin',
    }),
    admin,
    async (ctx) => {
      const approve =
        asList(validate(installQuery, ctx.query).approve_hosts)
          ?.flatMap((h) => h.split(','))
          .map((h) => h.trim())
          .filter(Boolean) ?? [];
      ctx.status = 201;
      ctx.body = await p.admin.install(actor(ctx), await readPackage(ctx), approve);
    },
  );
  r.get(`${A}/apps/:id`, doc({ summary: 'One installed app', auth: 'admin' }), admin, async (ctx) => {
    ctx.body = await p.admin.get(me(ctx), ctx.params.id);
  });
  r.put(
    `${A}/apps/:id/package`,
    doc({ summary: 'Upgrade an app with a new package (ZIP body)', consumes: 'application/zip', auth: 'admin' }),
    admin,
    async (ctx) => {
      ctx.body = await p.admin.upgrade(actor(ctx), ctx.params.id, await readPackage(ctx));
    },
  );
  r.patch(`${A}/apps/:id`, doc({ summary: 'Enable, disable or configure an app', body: patchBody, auth: 'admin' }), admin, async (ctx) => {
    ctx.body = await p.admin.patch(actor(ctx), ctx.params.id, await body(ctx, patchBody));
  });
  r.delete(`${A}/apps/:id`, doc({ summary: 'Remove an app', auth: 'admin' }), admin, async (ctx) => {
    ctx.body = await p.admin.uninstall(actor(ctx), ctx.params.id);
  });
  // Licences (docs/app-plugins.md, "Licences"): an app's is its tenant's; store keys and revocations the installation's.
  const installed = async (ctx: Ctx) =>
    (await p.repo.get(me(ctx), ctx.params.id)) ??
    (() => {
      throw new AppError('not_found', { path: ctx.params.id });
    })();
  r.put(`${A}/apps/:id/license`, doc({ summary: 'Install a licence token for an app', body: licenseBody, auth: 'admin' }), admin, async (ctx) => {
    const app = await installed(ctx);
    ctx.body = await p.licenses.set(actor(ctx), app, (await body(ctx, licenseBody)).token);
  });
  r.delete(`${A}/apps/:id/license`, doc({ summary: 'Remove an app’s licence', auth: 'admin' }), admin, async (ctx) => {
    ctx.body = await p.licenses.remove(actor(ctx), await installed(ctx));
  });
  r.get(`${A}/store-keys`, doc({ summary: 'Trusted app-store keys', auth: 'admin' }), admin, async (ctx) => {
    ctx.body = await p.licenses.storeKeys();
  });
  r.post(`${A}/store-keys`, doc({ summary: 'Trust an app-store key', body: storeKeyBody, status: 201, auth: 'admin' }), admin, async (ctx) => {
    const b = await body(ctx, storeKeyBody);
    ctx.status = 201;
    ctx.body = await p.licenses.addStoreKey(actor(ctx), b.store, b.public_key_pem);
  });
  r.delete(`${A}/store-keys/:id`, doc({ summary: 'Stop trusting an app-store key', auth: 'admin' }), admin, async (ctx) => {
    const id = Number(ctx.params.id);
    if (!Number.isInteger(id) || id < 1) throw new AppError('bad_id');
    ctx.body = await p.licenses.removeStoreKey(actor(ctx), id);
  });
  r.get(`${A}/license-revocations`, doc({ summary: 'Revoked licences', auth: 'admin' }), admin, async (ctx) => {
    ctx.body = await p.licenses.revocations();
  });
  r.post(`${A}/license-revocations`, doc({ summary: 'Revoke a licence', body: revokeBody, status: 201, auth: 'admin' }), admin, async (ctx) => {
    const b = await body(ctx, revokeBody);
    ctx.status = 201;
    ctx.body = await p.licenses.revoke(actor(ctx), b.license_id, b.note ?? null);
  });
  r.delete(`${A}/license-revocations/:id`, doc({ summary: 'Lift a licence revocation', auth: 'admin' }), admin, async (ctx) => {
    ctx.body = await p.licenses.unrevoke(actor(ctx), ctx.params.id);
  });
  r.get(`${A}/keys`, doc({ summary: 'Trusted publisher keys', auth: 'admin' }), admin, async (ctx) => {
    ctx.body = await p.admin.keys();
  });
  r.post(`${A}/keys`, doc({ summary: 'Trust a publisher key', body: keyBody, status: 201, auth: 'admin' }), admin, async (ctx) => {
    const b = await body(ctx, keyBody);
    ctx.status = 201;
    ctx.body = await p.admin.addKey(actor(ctx), b.publisher, b.public_key_pem);
  });
  r.delete(`${A}/keys/:id`, doc({ summary: 'Stop trusting a publisher key', auth: 'admin' }), admin, async (ctx) => {
    const id = Number(ctx.params.id);
    if (!Number.isInteger(id) || id < 1) throw new AppError('bad_id');
    ctx.body = await p.admin.removeKey(actor(ctx), id);
  });
  r.get(`${A}/config`, doc({ summary: 'App plugins settings (enabled)', auth: 'admin' }), admin, (ctx) => {
    ctx.body = { enabled: d.settings.get('app_plugins_enabled') };
  });
  r.patch(`${A}/config`, doc({ summary: 'Turn app plugins on or off', body: configBody, auth: 'admin' }), admin, async (ctx) => {
    const b = await body(ctx, configBody);
    await d.settings.set('app_plugins_enabled', b.enabled);
    await d.bus.emit(me(ctx), 'audit', {
      action: 'admin.config_change',
      actor: actorOf(ctx),
      request: reqMeta(ctx),
      resource: 'app_plugins',
      meta: { enabled: b.enabled },
    });
    ctx.body = { enabled: b.enabled };
  });
  return r;
}
