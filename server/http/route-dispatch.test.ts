import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import type { AppState } from './context';
import { routerDispatch } from './route-dispatch';

/** A few routers shaped like the app's: prefixed ones with their own `use` middlewares, unprefixed ones, a parameter. */
function routers(): Array<Router<AppState>> {
  const files = new Router<AppState>({ prefix: '/api/files' });
  files.use(async (ctx, next) => {
    ctx.set('X-Files-Mw', '1');
    await next();
  });
  files.get('/raw', (ctx) => void (ctx.body = 'raw'));
  files.post('/raw', (ctx) => void (ctx.body = 'posted'));
  const verbs = new Router<AppState>({ prefix: '/api/files' });
  verbs.use(async (ctx, next) => {
    ctx.set('X-Verbs-Mw', '1');
    await next();
  });
  verbs.delete('/entry', (ctx) => void (ctx.body = 'deleted'));
  const shares = new Router<AppState>();
  shares.get('/s/:token', (ctx) => void (ctx.body = `share ${ctx.params.token}`));
  shares.put('/api/files/raw', (ctx) => void (ctx.body = 'put elsewhere'));
  const bare = new Router<AppState>();
  bare.get('/api/capabilities', (ctx) => void (ctx.body = 'caps'));
  return [bare, files, verbs, shares];
}

/** A server whose routers are behind `mount`, then a fallback that answers 404 `fallback`. */
async function server(mount: (app: Koa<AppState>) => void): Promise<{ url: string; close(): void }> {
  const app = new Koa<AppState>();
  mount(app);
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = 'fallback';
  });
  const s = app.listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, close: () => s.close() };
}

const REQUESTS: Array<[string, string]> = [
  ['GET', '/api/files/raw'],
  ['GET', '/API/Files/Raw'],
  ['POST', '/api/files/raw'],
  ['PUT', '/api/files/raw'],
  ['PATCH', '/api/files/raw'],
  ['OPTIONS', '/api/files/raw'],
  ['HEAD', '/api/files/raw'],
  ['DELETE', '/api/files/entry'],
  ['GET', '/api/files/entry'],
  ['GET', '/api/files/nothing'],
  ['PROPFIND', '/api/files/nothing'],
  ['PROPFIND', '/api/files/raw'],
  ['GET', '/api/capabilities'],
  ['GET', '/s/abc'],
  ['GET', '/s/def'],
  ['DELETE', '/s/abc'],
  ['GET', '/web/page'],
];

async function answers(url: string): Promise<string[]> {
  const out: string[] = [];
  for (const [method, path] of REQUESTS) {
    const r = await fetch(url + path, { method });
    const body = method === 'HEAD' ? '' : await r.text();
    out.push(
      `${method} ${path} -> ${r.status} allow=${r.headers.get('allow')} files=${r.headers.get('x-files-mw')} verbs=${r.headers.get('x-verbs-mw')} ${body}`,
    );
  }
  return out;
}

test('the dispatch answers every request as the routers mounted one after another do', async () => {
  const mounted = await server((app) => {
    for (const r of routers()) app.use(r.routes() as unknown as Koa.Middleware).use(r.allowedMethods() as unknown as Koa.Middleware);
  });
  const dispatched = await server((app) => void app.use(routerDispatch(routers()) as unknown as Koa.Middleware));
  try {
    const want = await answers(mounted.url);
    // Twice: the second pass answers from the remembered routers of each path.
    assert.deepEqual(await answers(dispatched.url), want);
    assert.deepEqual(await answers(dispatched.url), want);
    // What the comparison rests on: a wrong method is 405 with the routes' methods, an unknown one 501.
    assert.match(want[3], /^PUT \/api\/files\/raw -> 200 .* put elsewhere$/);
    assert.match(want[4], /^PATCH \/api\/files\/raw -> 405 allow=HEAD, GET, POST, PUT /);
    assert.match(want[10], /^PROPFIND \/api\/files\/nothing -> 501 /);
    assert.match(want[8], /^GET \/api\/files\/entry -> 405 .* files=null verbs=null/);
  } finally {
    mounted.close();
    dispatched.close();
  }
});
