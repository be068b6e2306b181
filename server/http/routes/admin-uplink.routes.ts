/**
 * GET/PATCH /api/admin/uplink (admin): the uplink protection settings of
 * public links. Each is `null` (follow the environment) or a number in its
 * range; a value out of range is refused with 400 `validation_failed` naming
 * the field. Changes apply at once (the budget to streams already running).
 */
import Router from '@koa/router';
import type { EventBus } from '../../events';
import type { SettingsStore } from '../../settings';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { validate, z } from '../validate';
import { actorOf, me, reqMeta, type AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Admin: settings', 'admin');

export const UPLINK_KEYS = ['public_egress_mbps', 'public_link_max_streams', 'public_link_max_addresses'] as const;
type UplinkKey = (typeof UPLINK_KEYS)[number];
/** Each value is checked by the settings store (its range, or null to follow the environment). */
const patch = z.strictObject(
  Object.fromEntries(UPLINK_KEYS.map((k) => [k, z.unknown().optional().describe('null (follow the environment) or a number in its range')])),
);

export function adminUplinkRoutes(d: {
  settings: SettingsStore;
  bus: EventBus;
  effective: () => Record<UplinkKey, number>;
  maxJsonBytes: number;
}): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin' });
  r.use(requireAdmin);
  const view = () => ({ settings: Object.fromEntries(UPLINK_KEYS.map((k) => [k, d.settings.get(k)])), effective: d.effective() });

  r.get('/uplink', doc({ summary: 'Uplink protection of public links: settings and effective values' }), (ctx) => {
    ctx.body = view();
  });

  r.patch('/uplink', doc({ summary: 'Change uplink protection of public links', body: patch }), async (ctx) => {
    const b = validate(patch, await readObject(ctx, d.maxJsonBytes));
    // Check every field before storing any, so a refused request changes nothing.
    const next = UPLINK_KEYS.filter((k) => b[k] !== undefined).map((k) => [k, d.settings.check(k, b[k])] as const);
    const changes: Record<string, { from: unknown; to: unknown }> = {};
    for (const [k, v] of next) {
      const from = d.settings.get(k);
      if (from === v) continue;
      await d.settings.set(k, v);
      changes[k] = { from, to: v };
    }
    if (Object.keys(changes).length)
      await d.bus.emit(me(ctx), 'audit', { action: 'admin.config_change', actor: actorOf(ctx), request: reqMeta(ctx), resource: 'uplink', meta: { changes } });
    ctx.body = view();
  });
  return r;
}
