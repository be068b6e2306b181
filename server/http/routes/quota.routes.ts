/**
 * /api/files/quota/*: usage per storage (from the catalogue, reused 15 s, and
 * recounted at once after a change in that storage) and per user.
 */
import Router from '@koa/router';
import type { Catalogue } from '../../catalogue';
import type { Db } from '../../db';
import type { EventBus } from '../../events';
import { requireUser } from '../middlewares/auth';
import { me, type AppState } from '../context';

const REUSE_MS = 15_000;

export function quotaRoutes(d: { catalogue: Catalogue; db: Db; bus?: EventBus }): Router<AppState> {
  const r = new Router<AppState>({ prefix: '/api/files/quota' });
  r.use(requireUser);
  const cache = new Map<number, { at: number; used_bytes: number; file_count: number }>();
  // The reuse saves a count per page view; a write must still show at once (the sidebar re-reads after an upload).
  d.bus?.on('folder.changed', (e) => void cache.delete(e.storage_id));
  const usage = (id: number) => {
    const hit = cache.get(id);
    if (hit && Date.now() - hit.at < REUSE_MS) return hit;
    const row = d.db.sqlite.prepare("SELECT IFNULL(sum(size), 0) AS used, count(*) AS n FROM nodes WHERE storage_id = ? AND type = 'file' AND deleted_at IS NULL").get(id) as { used: number; n: number };
    const v = { at: Date.now(), used_bytes: row.used, file_count: row.n };
    cache.set(id, v);
    return v;
  };
  r.get('/storages', (ctx) => {
    ctx.body = {
      storages: d.catalogue.visibleStorages(me(ctx)).map(({ storage }) => {
        const u = usage(storage.id);
        return { name: storage.name, uid: storage.uid, used_bytes: u.used_bytes, file_count: u.file_count };
      }),
    };
  });
  r.get('/me', (ctx) => {
    const p = me(ctx);
    const row = d.db.sqlite.prepare("SELECT IFNULL(sum(size), 0) AS used, count(*) AS n FROM nodes WHERE owner_id = ? AND type = 'file' AND deleted_at IS NULL").get(p.id) as { used: number; n: number };
    const quota = (d.db.sqlite.prepare('SELECT quota_bytes FROM users WHERE id = ?').get(p.id) as { quota_bytes: number | null } | undefined)?.quota_bytes ?? null;
    ctx.body = { used_bytes: row.used, file_count: row.n, quota_bytes: quota, remaining_bytes: quota === null ? null : Math.max(0, quota - row.used) };
  });
  return r;
}
