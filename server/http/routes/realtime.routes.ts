/**
 * GET /api/events/stream?folder=<ui path>: a Server-Sent Events stream of
 * `change` frames for the open folder and `op` / `notification` frames for
 * the caller. EventSource reconnects by itself; a ping every 25 s keeps
 * proxies and tunnels from closing an idle stream.
 */
import Router from '@koa/router';
import { PassThrough } from 'node:stream';
import type { RealtimeHub, RealtimeFrame } from '../../events';
import type { Actor } from '../../auth';
import { requireUser } from '../middlewares/auth';
import { actor, me, type AppState } from '../context';
import { validate, z } from '../validate';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Events', 'user');

export interface RealtimeDeps {
  hub: RealtimeHub;
  /** Folder key for a UI path the caller may read; throws the access error otherwise; null for `/`. */
  resolveFolder(a: Actor, uiPath: string): Promise<string | null> | string | null;
  /** The page opened the folder (after `resolveFolder` allowed it); returns what to call when the stream closes. */
  folderOpened?(a: Actor, uiPath: string): () => void;
}

const PING_MS = 25_000;

/** The open folder (a UI path; `/` when absent or repeated, never a refusal). */
const streamQuery = z.object({ folder: z.string().optional().catch(undefined) });

export function realtimeRoutes(d: RealtimeDeps): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/events' });
  r.get(
    '/stream',
    doc({ summary: 'Server-Sent Events: changes in the open folder, my operations and notifications', query: streamQuery, produces: ['text/event-stream'] }),
    requireUser,
    async (ctx) => {
      const folder = validate(streamQuery, ctx.query).folder ?? '/';
      const a = actor(ctx);
      const key = await d.resolveFolder(a, folder);
      const stream = new PassThrough();
      const send = (f: RealtimeFrame) => {
        if (!stream.writableEnded) stream.write(`event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`);
      };
      stream.write(`retry: 3000\nevent: ready\ndata: ${JSON.stringify({ folder, subscribed: key !== null })}\n\n`);
      const p = me(ctx);
      // A change of the folder in the last seconds is sent at once (RECENT_CHANGE_MS): the page's listing may predate it.
      const off = d.hub.add({ tenant_id: p.tenant_id, userId: p.id, isAdmin: p.role === 'admin', folderKey: key, send });
      const closeFolder = key !== null ? d.folderOpened?.(a, folder) : undefined;
      const ping = setInterval(() => send({ event: 'ping', data: { t: Date.now() } }), PING_MS);
      const close = () => {
        clearInterval(ping);
        closeFolder?.();
        off();
        stream.end();
      };
      ctx.req.on('close', close);
      ctx.req.socket.setTimeout(0);
      ctx.set({ 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no', Connection: 'keep-alive' });
      ctx.type = 'text/event-stream';
      ctx.status = 200;
      ctx.body = stream;
    },
  );
  return r;
}
