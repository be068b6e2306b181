/**
 * /api/admin/homes: where new people's home folders go (files/homes.ts).
 * `GET` → `{enabled, storage_id, folder, effective_storage}`; `PATCH` any of
 * `{enabled, storage_id (null = the default storage), folder}`; audited `admin.config_change`.
 */
import Router from '@koa/router';
import { AppError } from '../../errors';
import type { EventBus } from '../../events';
import type { Homes } from '../../files';
import { cleanRel } from '../../lib/paths';
import type { SettingsStore } from '../../settings';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { validate, z } from '../validate';
import { actorOf, me, reqMeta, type AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: settings', 'admin');

const patch = z.strictObject({
  enabled: z.boolean().optional(),
  storage_id: z.number().int().positive().nullable().optional(),
  folder: z.string().max(1024).optional(),
});

export function adminHomesRoutes(d: { homes: Homes; settings: SettingsStore; bus: EventBus; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin' });
  r.use(requireAdmin);
  r.get('/homes', doc({ summary: 'Where new people’s home folders go' }), async (ctx) => {
    ctx.body = await d.homes.view();
  });
  r.patch('/homes', doc({ summary: 'Change where home folders go', body: patch }), async (ctx) => {
    const b = validate(patch, await readObject(ctx, d.maxJsonBytes));
    if (b.storage_id != null && !d.homes.storageExists(b.storage_id))
      throw new AppError('validation_failed', { field: 'storage_id' }, { field: 'storage_id', reason: 'no such storage' });
    let folder: string | undefined;
    if (b.folder !== undefined) {
      try {
        folder = cleanRel(b.folder);
      } catch (e) {
        throw new AppError('validation_failed', { field: 'folder' }, { field: 'folder', reason: (e as AppError).code ?? 'bad_path' });
      }
    }
    const before = await d.homes.view();
    if (b.enabled !== undefined) await d.settings.set('homes_enabled', b.enabled);
    if (b.storage_id !== undefined) await d.settings.set('home_storage_id', b.storage_id);
    if (folder !== undefined) await d.settings.set('home_folder', folder);
    const after = await d.homes.view();
    const changes = Object.fromEntries(
      (['enabled', 'storage_id', 'folder'] as const).filter((k) => before[k] !== after[k]).map((k) => [k, { from: before[k], to: after[k] }]),
    );
    if (Object.keys(changes).length)
      await d.bus.emit(me(ctx), 'audit', { action: 'admin.config_change', actor: actorOf(ctx), request: reqMeta(ctx), resource: 'homes', meta: { changes } });
    ctx.body = after;
  });
  return r;
}
