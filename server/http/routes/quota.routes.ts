/**
 * /api/files/quota/*: usage per storage (from the catalogue, reused 15 s, and
 * recounted at once after a change in that storage) and per user.
 */
import Router from '@koa/router';
import type { Auth } from '../../auth';
import type { Catalogue, StorageRef } from '../../catalogue';
import type { EventBus } from '../../events';
import type { FileService } from '../../files';
import { requireUser } from '../middlewares/auth';
import { actor, me, type AppState } from '../context';
import { routeDoc } from '../openapi/route-doc';

const doc = routeDoc('Files', 'user');

const REUSE_MS = 15_000;
/** Storages whose count is kept; a cache of usage figures must not grow with deleted storages. */
const MAX_CACHED = 1000;

export function quotaRoutes(d: { catalogue: Catalogue; files: FileService; auth: Auth; bus: EventBus }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files/quota' });
  r.use(requireUser);
  const cache = new Map<number, { at: number; used_bytes: number; file_count: number }>();
  // The reuse saves a count per page view; a write must still show at once (the sidebar re-reads after an upload).
  d.bus?.onEveryInstance(
    'folder.changed',
    (e) => void cache.delete(e.storage_id),
    () => cache.clear(),
  );
  const usage = async (s: StorageRef) => {
    const hit = cache.get(s.id);
    if (hit && Date.now() - hit.at < REUSE_MS) return hit;
    if (cache.size >= MAX_CACHED) cache.clear();
    const v = { at: Date.now(), ...(await d.catalogue.nodes.usage(s, { storageId: s.id })) };
    cache.set(s.id, v);
    return v;
  };
  r.get('/storages', doc({ summary: 'Usage per storage I can open (a count is reused for 15 s)' }), async (ctx) => {
    ctx.body = {
      // A storage only passed through on the way to a home folder is not the caller's to count.
      storages: await Promise.all(
        d.files
          .forActor(actor(ctx))
          .visible()
          .filter((x) => !x.through)
          .map(async ({ storage }) => {
            const u = await usage(storage);
            return { name: storage.name, uid: storage.uid, used_bytes: u.used_bytes, file_count: u.file_count };
          }),
      ),
    };
  });
  r.get('/me', doc({ summary: 'My usage and quota' }), async (ctx) => {
    const p = me(ctx);
    const used = await d.catalogue.nodes.usage(p, { ownerId: p.id });
    const quota = (await d.auth.repo.byId(p, p.id))?.quota_bytes ?? null;
    ctx.body = {
      used_bytes: used.used_bytes,
      file_count: used.file_count,
      quota_bytes: quota,
      remaining_bytes: quota === null ? null : Math.max(0, quota - used.used_bytes),
    };
  });
  return r;
}
