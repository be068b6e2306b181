/**
 * `GET /api/admin/gateways`: which protocol gateways listen, where, and who is signed in.
 * `GET/PATCH /api/admin/gateways/settings`: how they show encrypted folders (`gateways_encrypted_folders`:
 * `hidden`, the default, or `ciphertext`, read only for members; docs/vault.md).
 */
import Router from '@koa/router';
import type { GatewayRegistry } from '../../gateways';
import type { SettingsStore } from '../../settings';
import { readObject } from '../middlewares/body';
import { requireAdmin } from '../middlewares/auth';
import { validate, z } from '../validate';
import type { AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const settingsBody = z.strictObject({ gateways_encrypted_folders: z.enum(['hidden', 'ciphertext']) });

const doc = routeDoc('Admin: gateways', 'admin');

export function adminGatewayRoutes(d: { registry: GatewayRegistry; settings: SettingsStore; maxJsonBytes: number }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/admin/gateways' });
  r.use(requireAdmin);
  r.get('/', doc({ summary: 'Gateway listeners and their live sessions' }), (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = d.registry.status();
  });
  const view = () => ({ gateways_encrypted_folders: d.settings.get('gateways_encrypted_folders') });
  r.get('/settings', doc({ summary: 'How gateways show encrypted folders' }), (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = view();
  });
  r.patch('/settings', doc({ summary: 'Change how gateways show encrypted folders', body: settingsBody }), async (ctx) => {
    const b = validate(settingsBody, await readObject(ctx, d.maxJsonBytes));
    await d.settings.set('gateways_encrypted_folders', b.gateways_encrypted_folders);
    ctx.body = view();
  });
  return r;
}
