/**
 * Versions: before a file is overwritten (upload over it, save-text, editor
 * save) its current bytes are copied to `.versions/<path>/<slot>` and a row
 * is kept. Retention (`versions_keep_n`): unset keeps 20 per file, trimmed on
 * each snapshot; 0 keeps everything and sweeps nothing; N > 0 keeps N, on
 * each snapshot and in the daily sweep. Snapshots are never scanned: the
 * bytes were already scanned when they were written. A snapshot lives in its
 * storage's tenant (docs/tenants.md): callers pass the storage row they act
 * on, and the sweep goes tenant by tenant.
 */
import { mimeOf, storageTenant, type Catalogue, type GateNode } from '../catalogue';
import type { VersionView } from '../contract';
import type { Db, TenantScope, TenantsRepo } from '../db';
import type { ActorRef, RequestMeta } from '../events';
import { servedEtag, type OpenFile, type Place, type VersionsPort } from '../files';
import type { StorageOps } from '../files/internal';
import type { SettingsStore } from '../settings';
import { AppError, isAppError } from '../errors';
import { baseName, isInternalPath, joinRel, parentRel, RESERVED_NAMES } from '../lib/paths';
import { slotName } from './tree';
import { VersionsRepo, type VersionRow } from './versions.repo';

export const VERSIONS_DIR: (typeof RESERVED_NAMES)[number] = '.versions';
/** Kept per file while `versions_keep_n` is unset. */
export const DEFAULT_KEEP = 20;

export type { VersionView };

/** The storage a version call is about: its row (id and tenant). */
export type VersionedStorage = TenantScope & { id: number };

export class VersionsService implements VersionsPort {
  private repo: VersionsRepo;

  constructor(
    db: Db,
    private cat: Pick<Catalogue, 'repo'>,
    private ops: StorageOps,
    private settings: SettingsStore,
    private tenants: TenantsRepo,
  ) {
    this.repo = new VersionsRepo(db);
  }

  /**
   * Snapshots the current file at `p` before it is replaced. Returns null
   * (and does nothing) when there is nothing to keep: no file there, a
   * folder, an empty file, or a path inside a service folder.
   */
  async snapshotBeforeOverwrite(p: Place, actor: ActorRef | null = null): Promise<VersionView | null> {
    if (p.rel === '' || isInternalPath(p.rel)) return null;
    const cur = await this.ops.statOrNull(p);
    if (!cur || cur.type !== 'file' || cur.size === 0) return null;
    const tenant = storageTenant(this.cat.repo, p.storage_id);
    const versionRel = joinRel(joinRel(VERSIONS_DIR, p.rel), slotName());
    await this.ops.mkdir({ storage_id: p.storage_id, rel: parentRel(versionRel) });
    await this.ops.copyFile(p, versionRel, { size: cur.size, overwrite: true });
    const row = await this.repo.insert(tenant, {
      storage_id: p.storage_id,
      path: p.rel,
      version_rel: versionRel,
      size: cur.size,
      mtime: Math.round(cur.mtime),
      created_by: actor?.id ?? null,
      created_at: new Date().toISOString(),
    });
    const keep = this.settings.get('versions_keep_n');
    if (keep !== 0) await this.trim(tenant, p, keep ?? DEFAULT_KEEP);
    return present(row);
  }

  /** Versions of one path, newest first (also for a file that was deleted since). */
  async list(storage: VersionedStorage, rel: string): Promise<VersionView[]> {
    return (await this.repo.list(storage, { storage_id: storage.id, rel })).map(present);
  }

  /** Version `id` of `rel` (another file's or another tenant's id is `not_found`, as an unknown one). */
  private async versionOf(storage: VersionedStorage, rel: string, id: number): Promise<VersionRow> {
    const row = await this.repo.byId(storage, { storage_id: storage.id, rel }, id);
    if (!row) throw new AppError('not_found', { id });
    return row;
  }

  /**
   * Version `id` of `rel` opened for serving (view or download before a
   * restore), under the file's own name; not_found as for `restore`.
   */
  async open(storage: VersionedStorage, rel: string, id: number): Promise<OpenFile> {
    const row = await this.versionOf(storage, rel, id);
    const place: Place = { storage_id: storage.id, rel: row.version_rel };
    const found = await this.ops.statOrNull(place);
    if (!found || found.type !== 'file') throw new AppError('not_found', { id }, undefined, 'the snapshot is gone from the storage');
    const { entry: e, local } = await this.ops.statForServing(place);
    return {
      place,
      name: baseName(rel),
      size: e.size,
      mtime: row.mtime,
      etag: servedEtag(e.size, e.mtime, e.etag),
      mime: mimeOf(baseName(rel)),
      read: (span, signal) => this.ops.read(place, span, signal),
      localFile: async () => local,
      presign: async () => null,
    };
  }

  /**
   * Writes version `id` back over `rel`, after snapshotting what is there now
   * (so a restore can itself be undone). A file deleted since comes back
   * (its folder is re-created). Unknown id, another file's id, or snapshot
   * bytes gone from the backend → `not_found`.
   */
  async restore(storage: VersionedStorage, rel: string, id: number, actor: ActorRef | null, request?: RequestMeta): Promise<GateNode> {
    const row = await this.versionOf(storage, rel, id);
    const storageId = storage.id;
    const p: Place = { storage_id: storageId, rel };
    const snapshot: Place = { storage_id: storageId, rel: row.version_rel };
    if (!(await this.ops.statOrNull(snapshot))) {
      await this.repo.remove(storage, [id]);
      throw new AppError('not_found', { id }, undefined, 'the snapshot is gone from the storage');
    }
    const cur = await this.ops.statOrNull(p);
    if (cur?.type === 'dir') throw new AppError('conflict', { reason: 'a folder now has that name' });
    if (cur) await this.snapshotBeforeOverwrite(p, actor);
    else if (parentRel(rel) !== '') await this.ops.mkdir({ storage_id: storageId, rel: parentRel(rel) });
    await this.ops.copyFile(snapshot, rel, { size: row.size, overwrite: true });
    return this.ops.written(p, await this.ops.stat(p), { actor, request, origin: 'restore', audit: 'file.upload', meta: { version_id: id } });
  }

  /**
   * Daily sweep: trims every file to `versions_keep_n` when it is above 0, tenant by tenant over every
   * tenant; returns snapshots removed.
   */
  async sweep(log: (m: string, e?: unknown) => void = () => {}): Promise<number> {
    const keep = this.settings.get('versions_keep_n');
    if (keep === null || keep === 0) return 0;
    let n = 0;
    for (const t of await this.tenants.list()) {
      for (const g of await this.repo.over(t, keep)) {
        try {
          n += await this.trim(t, { storage_id: g.storage_id, rel: g.path }, keep);
        } catch (e) {
          log(`versions sweep: ${g.path} on storage ${g.storage_id} failed`, e);
        }
      }
    }
    return n;
  }

  /** Deletes the oldest snapshots of one file of the tenant beyond `keep`. */
  private async trim(s: TenantScope, p: Place, keep: number): Promise<number> {
    const old = await this.repo.beyond(s, p, keep);
    const gone: number[] = [];
    try {
      for (const v of old) {
        await this.ops.delete({ storage_id: p.storage_id, rel: v.version_rel }).catch((e) => {
          if (!(isAppError(e) && e.code === 'not_found')) throw e;
        });
        gone.push(v.id);
      }
    } finally {
      // The rows of the bytes already deleted go in one statement, also when a later delete failed.
      await this.repo.remove(s, gone);
    }
    return old.length;
  }
}

const present = (r: VersionRow): VersionView => ({
  id: r.id,
  size: r.size,
  modified: new Date(r.mtime).toISOString(),
  created_at: r.created_at,
  created_by: r.created_by,
});
