/**
 * Mounts the WebDAV gateway (server/gateways/webdav) on an HTTP app: its
 * file reads are served by `serveFile` (ranges, validators, HEAD, the local
 * fast path), never redirected to a presigned URL (DAV clients send their
 * credentials along, and a redirect would leave this server's access checks).
 */
import type { Config } from '../config';
import type { Db } from '../db';
import type { GatewayCore } from '../gateways';
import { webdav } from '../gateways/webdav';
import type { Ctx, Mw } from './context';
import { serveFile } from './serve-file';

/** The `/dav` middleware, or none when SERVICE_WEBDAV is off. */
export function davMiddleware(core: GatewayCore, db: Db, config: Pick<Config, 'webdav' | 'webdavAllowHttp'>): Mw[] {
  if (!config.webdav) return [];
  const serve = (ctx: unknown, f: Parameters<typeof serveFile>[1]) =>
    serveFile(ctx as Ctx, f, { inline: false, cacheControl: 'private, no-cache', conditional: true, ranges: 'multi' });
  return [webdav({ core, db, serve, allowHttp: config.webdavAllowHttp }) as unknown as Mw];
}
