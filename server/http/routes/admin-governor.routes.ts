/**
 * GET/PATCH /api/admin/governor (admin): the CPU budget of background work
 * (docs/desktop.md, "Governor"). `background_cpu_percent` is `null` (follow
 * SERVICE_BACKGROUND_CPU) or an integer 0..6400 (percent of one core, 0 = no
 * limit); anything else is refused with 400 `validation_failed` naming the
 * field. A change applies to the next start of background work.
 */
import Router from '@koa/router';
import type { EventBus } from '../../events';
import type { Governor } from '../../jobs';
import type { SettingsStore } from '../../settings';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { validate, z } from '../validate';
import { actorOf, me, reqMeta, type AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: settings', 'admin');

const KEY = 'background_cpu_percent';
/** The value is checked by the settings store (its range, or null to follow the environment). */
const patch = z.strictObject({
  [KEY]: z.unknown().optional().describe('null (follow SERVICE_BACKGROUND_CPU) or an integer 0..6400, percent of one core; 0 = no limit'),
});

export function adminGovernorRoutes(d: { settings: SettingsStore; governor: Governor; bus: EventBus; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin' });
  r.use(requireAdmin);
  const view = () => ({ settings: { [KEY]: d.settings.get(KEY) }, status: d.governor.status() });

  r.get('/governor', doc({ summary: 'Background work: CPU budget setting and the governor’s status' }), (ctx) => {
    ctx.body = view();
  });

  r.patch('/governor', doc({ summary: 'Change the CPU budget of background work', body: patch }), async (ctx) => {
    const b = validate(patch, await readObject(ctx, d.maxJsonBytes));
    if (b[KEY] !== undefined) {
      const to = d.settings.check(KEY, b[KEY]);
      const from = d.settings.get(KEY);
      if (from !== to) {
        await d.settings.set(KEY, to);
        await d.bus.emit(me(ctx), 'audit', {
          action: 'admin.config_change',
          actor: actorOf(ctx),
          request: reqMeta(ctx),
          resource: 'governor',
          meta: { changes: { [KEY]: { from, to } } },
        });
      }
    }
    ctx.body = view();
  });
  return r;
}
