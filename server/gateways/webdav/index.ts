/**
 * WebDAV at `/dav/` on the main listener: a Koa middleware placed before the
 * API's authentication, so neither the session cookie nor the CSRF guard
 * applies here. Basic auth is the only credential (a cross-site page cannot
 * make a browser attach it, unlike the cookie). Basic auth sends the password
 * with every request, so it is accepted over TLS, from this machine, or
 * through a local TLS-ending proxy (`X-Forwarded-Proto: https` on a loopback
 * socket); a plain-HTTP client on the network is refused with a sentence
 * saying so, unless SERVICE_WEBDAV_ALLOW_HTTP is on. OPTIONS answers without
 * signing in (it reveals nothing), so OS clients discover DAV first.
 */
import type { Next } from 'koa';
import type { GatewayCore } from '..';
import type { Db } from '../../db';
import { AppError } from '../../errors';
import type { OpenFile } from '../../files';
import { davAnswer, DavError } from './errors';
import { LockTable } from './locks';
import { ALLOW, METHODS } from './methods';
import { DeadProps } from './props.repo';
import { DavRequest, PREFIX, type DavCtx } from './request';
import { escapeXml as esc } from '../../lib/xml';

export interface WebdavOptions {
  core: GatewayCore;
  db: Db;
  /** Serves a file's bytes (the HTTP layer's `serveFile` with the gateway's options). */
  serve: (ctx: DavCtx, f: OpenFile) => Promise<void>;
  /** Accept Basic auth over plain HTTP from other machines (SERVICE_WEBDAV_ALLOW_HTTP). */
  allowHttp: boolean;
}

/** The `/dav` middleware; other paths pass through untouched. */
export function webdav(o: WebdavOptions): (ctx: DavCtx, next: Next) => Promise<void> {
  const deps = { props: new DeadProps(o.db), locks: new LockTable(), serve: o.serve };
  return async (ctx, next) => {
    if (ctx.path !== PREFIX && !ctx.path.startsWith(PREFIX + '/')) return next();
    try {
      if (ctx.method === 'OPTIONS') return options(ctx);
      const method = METHODS[ctx.method];
      if (!method) throw new DavError(405, `${ctx.method} is not supported here.`);
      if (!secure(ctx) && !o.allowHttp) {
        throw new DavError(
          403,
          'WebDAV over plain HTTP from the network would send your password in clear: use the https address, or ask the admin to set SERVICE_WEBDAV_ALLOW_HTTP=1.',
        );
      }
      const actor = await signIn(o.core, ctx);
      const tree = o.core.tree(actor, 'webdav');
      o.core.registry.touch('webdav', tree.who, ctx.state.ip);
      await method(new DavRequest(ctx, tree, deps.locks), deps);
    } catch (e) {
      const a = davAnswer(e);
      ctx.req.resume(); // an unread body must not stall the connection
      ctx.status = a.status;
      ctx.set(a.headers ?? {});
      if (a.condition) {
        ctx.type = 'application/xml; charset=utf-8';
        ctx.body = `<?xml version="1.0" encoding="utf-8"?>\n<D:error xmlns:D="DAV:"><D:${a.condition}/><D:responsedescription>${esc(a.message)}</D:responsedescription></D:error>`;
      } else {
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = a.message + '\n';
      }
      if (a.status === 405) ctx.set('Allow', ALLOW);
    }
  };
}

function options(ctx: DavCtx): void {
  ctx.status = 200;
  ctx.set({ DAV: '1, 2', Allow: ALLOW, 'MS-Author-Via': 'DAV', 'Accept-Ranges': 'bytes' });
  ctx.body = '';
}

/** TLS, a loopback request, or a loopback socket behind a proxy that ended TLS. */
function secure(ctx: DavCtx): boolean {
  if (ctx.secure || ctx.state.loopback) return true;
  const local = /^(127\.|::1$|::ffff:127\.)/.test(ctx.req.socket.remoteAddress ?? '');
  return local && ctx.get('x-forwarded-proto').toLowerCase() === 'https';
}

async function signIn(core: GatewayCore, ctx: DavCtx) {
  const h = ctx.get('authorization');
  if (!/^basic /i.test(h)) throw new AppError('unauthenticated');
  const raw = Buffer.from(h.slice(6).trim(), 'base64').toString('utf8');
  const colon = raw.indexOf(':');
  if (colon < 0) throw new AppError('unauthenticated');
  // A plain name signs in to the tenant the host or `/t/<slug>/` prefix selected; `name@slug` to that one.
  return core.auth.signIn(raw.slice(0, colon), raw.slice(colon + 1), { ip: ctx.state.ip, ua: ctx.state.ua || 'webdav' }, 'webdav', ctx.state.tenant);
}
