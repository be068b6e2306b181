/**
 * GET /api/openapi.json (no sign-in: it describes routes, it holds no secrets):
 * the OpenAPI 3.1 document of every router, built at the first request and kept
 * (the routers do not change while the server runs).
 */
import Router from '@koa/router';
import { buildOpenApi } from '../openapi/document';
import { routeDoc } from '../openapi/route-doc';
import type { AppState } from '../context';

const doc = routeDoc('Meta', 'public');

export function openapiRoutes(routers: () => ReadonlyArray<Router<AppState>>, version: string): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api' });
  let text: string | undefined;
  r.get('/openapi.json', doc({ summary: 'This OpenAPI 3.1 description of the API' }), (ctx) => {
    text ??= JSON.stringify(buildOpenApi(routers(), version));
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'application/json';
    ctx.body = text;
  });
  return r;
}
