/**
 * Backups of Filedock itself (admin; docs/operations.md, "Backups of Filedock itself"):
 *   GET   /api/admin/backups           settings, the archives in the target folder, the last backup's age
 *   PATCH /api/admin/backups/settings  {cron?, keep?, target?}; every field checked before any is stored
 *   POST  /api/admin/backups/run       "back up now": 202 {op_id} (an op in the admin's list)
 */
import Router from '@koa/router';
import type { BackupService } from '../../backup';
import type { EventBus } from '../../events';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { validate, z } from '../validate';
import { actorOf, me, reqMeta, type AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: settings', 'admin');

const settingsBody = z.strictObject({
  cron: z.string().max(256).optional(),
  keep: z.number().int().optional(),
  target: z.string().max(4096).optional(),
});

export function adminBackupRoutes(d: { backups: BackupService; bus: EventBus; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin/backups' });
  r.use(requireAdmin);

  r.get('/', doc({ summary: 'Backups of Filedock: settings, the archives in the target folder, the last one' }), async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await d.backups.view();
  });

  r.patch('/settings', doc({ summary: 'Backup schedule, how many to keep, the target folder', body: settingsBody }), async (ctx) => {
    const b = validate(settingsBody, await readObject(ctx, d.maxJsonBytes));
    const changes = await d.backups.update(b);
    if (Object.keys(changes).length)
      await d.bus.emit(me(ctx), 'audit', { action: 'admin.config_change', actor: actorOf(ctx), request: reqMeta(ctx), resource: 'backups', meta: { changes } });
    ctx.body = await d.backups.view();
  });

  r.post('/run', doc({ summary: 'Back up now (an op)', status: 202 }), async (ctx) => {
    ctx.status = 202;
    ctx.body = { op_id: await d.backups.request('manual', me(ctx).id) };
  });
  return r;
}
