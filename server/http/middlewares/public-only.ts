/**
 * The split public listener (`SERVICE_PUBLIC_LISTEN`): the tunnel points at a
 * second port that serves only what strangers may reach (share and drop
 * pages, their API, signed thumbnails, public assets) and answers 404 to
 * everything else, so exposing links never exposes sign-in or admin.
 */
import { AppError } from '../../errors';
import type { Mw } from '../context';

export const PUBLIC_ROUTES = [
  /^\/s\/[^/]+/,
  /^\/d\/[^/]+/,
  /^\/p\/[^/]+/,
  /^\/api\/share\/[^/]+\//,
  /^\/api\/public\//,
  /^\/api\/p\//,
  /^\/api\/files\/share\/[^/]+$/,
  /^\/api\/files\/thumb\/\d+$/,
  /^\/api\/files\/thumb$/,
  /^\/api\/files\/docserver\/(fetch|callback)$/,
  /^\/public-assets\//,
  // The built web UI's hashed assets: the app page at /s/{token} (renderer/app-page.html) loads its code from here.
  /^\/assets\//,
  /^\/favicon\.ico$/,
  /^\/robots\.txt$/,
];

export const publicOnly: Mw = async (ctx, next) => {
  if (!PUBLIC_ROUTES.some((re) => re.test(ctx.path))) {
    ctx.state.door = 'public';
    throw new AppError('not_found');
  }
  // No session may ride on the public listener: links are the only credential there. The document
  // server's callback JWT may come in the header: it is kept aside for that route alone.
  if (ctx.path === '/api/files/docserver/callback') ctx.state.docserverAuthorization = ctx.get('authorization');
  ctx.request.headers.authorization = '';
  ctx.request.headers.cookie = '';
  // Everything on this listener came through the tunnel: nobody here is on the LAN (uplink budget).
  ctx.state.publicListener = true;
  await next();
};
