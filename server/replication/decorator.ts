/**
 * The replication driver decorator, installed by the composition root after
 * the read-only one (DriverManager `decorators`). Why a decorator and not a
 * write-gate hook: every change reaches a storage through its driver (the file
 * service, protection's trash and versions, gateways, jobs), including moves,
 * deletes and mkdirs that the gate does not announce as writes; and the read
 * fallback must sit under every reader. The wrapper stays a pass-through for
 * a storage with no enabled target (one indexed read per change).
 *
 * - After a change succeeds on the primary: `engine.changed` (async targets
 *   queue a job; sync targets are written before the call returns).
 * - A read or stat that errors (anything but not-found, a refusal or a
 *   cancel) is answered from the target when one is linked, and
 *   `primary_read_fail` is emitted (at most once a minute per storage).
 *   Listings are never redirected: `list` and `walk` pass through.
 */
import { isAppError } from '../errors';
import type { EventBus } from '../events';
import { RAW, type ReplicationEngine } from './engine';
import type { TargetsService } from './targets.service';
import type { RDriver } from './types';

const METHODS = [
  'stat',
  'list',
  'read',
  'write',
  'mkdir',
  'delete',
  'close',
  'walk',
  'move',
  'copy',
  'presignGet',
  'multipart',
  'watch',
  'localPath',
  'statLocal',
] as const;
/** Primary errors that are answers, not outages: never served from the backup. */
const ANSWERS = new Set([
  'not_found',
  'conflict',
  'permission_denied',
  'name_not_allowed',
  'name_too_long',
  'cancelled',
  'read_only',
  'unsupported',
  'bad_path',
]);
const READ_FAIL_EVENT_MS = 60_000;
/** Open multipart sessions whose final path the handle alone may not tell. */
const MAX_HANDLES = 10_000;

export function replicationDecorator(engine: ReplicationEngine, targets: TargetsService, bus: EventBus, log: (msg: string, err?: unknown) => void) {
  const lastReadFail = new Map<string, number>();
  const handles = new Map<string, string>();

  /** The target driver to read from when the primary failed with `e`, or null. */
  const fallback = async (uid: string, e: unknown, path: string): Promise<RDriver | null> => {
    if (isAppError(e) && ANSWERS.has(e.code)) return null;
    if (e instanceof Error && e.name === 'AbortError') return null;
    const link = await engine.linkedTarget(uid);
    if (!link) return null;
    const t = Date.now();
    if ((lastReadFail.get(uid) ?? 0) + READ_FAIL_EVENT_MS < t) {
      lastReadFail.set(uid, t);
      const reason = e instanceof Error ? e.message : String(e);
      void bus
        .emit(link.tenant, 'primary_read_fail', {
          title: 'Served from the backup',
          body: `Storage "${link.storage}" could not be read (${reason}); the backup answered.`,
          storage_id: link.storageId,
          path,
          reason,
        })
        .catch(() => undefined);
    }
    try {
      return await targets.driver(link.tenant, link.targetId);
    } catch {
      return null;
    }
  };

  return {
    name: 'replication',
    wrap<D extends RDriver>(driver: D, uid: string): D {
      const inner = driver as unknown as Record<string, unknown>;
      const w: Record<string | symbol, unknown> = {};
      for (const k of METHODS) {
        const v = inner[k];
        if (v !== undefined) w[k] = typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(driver) : v;
      }
      w[RAW] = driver;
      const after =
        <A extends unknown[], R>(fn: (...a: A) => Promise<R>, note: (...a: A) => Parameters<ReplicationEngine['changed']>) =>
        async (...a: A): Promise<R> => {
          const r = await fn(...a);
          const [, kind, rel, to] = note(...a);
          await engine.changed(uid, kind, rel, to);
          return r;
        };
      w.write = after(driver.write.bind(driver), (p) => [uid, 'write', p]);
      w.mkdir = after(driver.mkdir.bind(driver), (p) => [uid, 'mkdir', p]);
      w.delete = after(driver.delete.bind(driver), (p) => [uid, 'delete', p]);
      if (driver.move) w.move = after(driver.move.bind(driver), (f, t) => [uid, 'move', f, t]);
      if (driver.copy) w.copy = after(driver.copy.bind(driver), (f, t) => [uid, 'copy', f, t]);
      const mp = driver.multipart;
      if (mp) {
        w.multipart = Object.assign(Object.create(mp) as object, {
          presigned: (mp as { presigned?: boolean }).presigned,
          init: async (path: string, o: { size: number; partSize: number; mime?: string }) => {
            const r = await mp.init(path, o);
            if (handles.size >= MAX_HANDLES) handles.delete(handles.keys().next().value!);
            handles.set(r.handle, path);
            return r;
          },
          complete: async (handle: string, parts: Array<{ part: number; etag: string }>) => {
            const entry = await mp.complete(handle, parts);
            const rel = handles.get(handle) ?? pathOfHandle(handle);
            handles.delete(handle);
            if (rel !== null) await engine.changed(uid, 'write', rel);
            else log(`replication: the path of a completed multipart upload on storage ${uid} is unknown; the next sync or a Fix covers it`);
            return entry;
          },
        });
        // Methods left on the prototype (putPart, abort, presignPart) must still see the capability as `this`.
        for (const k of ['putPart', 'abort', 'presignPart'] as const) {
          const f = (mp as unknown as Record<string, unknown>)[k];
          if (typeof f === 'function') (w.multipart as Record<string, unknown>)[k] = f.bind(mp);
        }
      }
      w.read = async (p: string, range?: { start: number; end?: number }, signal?: AbortSignal) => {
        try {
          return await driver.read(p, range, signal);
        } catch (e) {
          const t = await fallback(uid, e, p);
          if (!t) throw e;
          return t.read(p, range, signal).catch(() => Promise.reject(e));
        }
      };
      w.stat = async (p: string) => {
        try {
          return await driver.stat(p);
        } catch (e) {
          const t = await fallback(uid, e, p);
          if (!t) throw e;
          return t.stat(p).catch(() => Promise.reject(e));
        }
      };
      if (driver.statLocal) {
        const statLocal = driver.statLocal.bind(driver);
        w.statLocal = async (p: string, o?: { open?: boolean }) => {
          try {
            return await statLocal(p, o);
          } catch (e) {
            const t = await fallback(uid, e, p);
            if (!t) throw e;
            // Served by `read` (which falls back too), not from a local path.
            return { entry: await t.stat(p).catch(() => Promise.reject(e)), path: null };
          }
        };
      }
      return w as unknown as D;
    },
  };
}

/** The final path recorded in a driver's multipart handle (local: `path`, s3: `rel`), or null. */
function pathOfHandle(handle: string): string | null {
  try {
    const h = JSON.parse(handle) as { path?: unknown; rel?: unknown };
    const p = typeof h.path === 'string' ? h.path : typeof h.rel === 'string' ? h.rel : null;
    return p;
  } catch {
    return null;
  }
}
