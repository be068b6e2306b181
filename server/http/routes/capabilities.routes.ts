/** GET /api/capabilities (alias /api/files/capabilities): public, cacheable for an hour. */
import Router from '@koa/router';
import type { Capabilities } from '../../contract';
import type { AppState } from '../context';

export function capabilitiesRoutes(get: () => Capabilities): Router<AppState> {
  const r = new Router<AppState>();
  const handler = (ctx: { body: unknown; set(k: string, v: string): void }) => {
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.body = get();
  };
  r.get('/api/capabilities', handler);
  r.get('/api/files/capabilities', handler);
  return r;
}
