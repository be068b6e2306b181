/**
 * The trash. A delete moves the item into `.service-trash/<slot>/<name>` on
 * its own storage (one slot folder per item, so equal names never collide)
 * and records its original path and deleter; the catalogue forgets the row
 * through the write gate, so listings and search no longer show it. Restore
 * moves it back (`name_taken` when the name is in use again) and announces
 * the whole subtree through the gate with origin `restore`, which re-scans
 * it. A storage whose driver cannot move deletes permanently and says so.
 * An item lives in its storage's tenant (docs/tenants.md): callers name the
 * tenant they act in, and another tenant's item is `not_found`.
 */
import { storageTenant, type Catalogue } from '../catalogue';
import type { TrashItem } from '../contract';
import type { TenantScope, TenantsRepo } from '../db';
import type { ActorRef, RequestMeta } from '../events';
import type { Place, TrashPort } from '../files';
import type { StorageOps } from '../files/internal';
import type { SettingsStore } from '../settings';
import { AppError, isAppError } from '../errors';
import { baseName, joinRel, parentRel, uiPath, RESERVED_NAMES } from '../lib/paths';
import { TrashRepo, type TrashRow } from './trash.repo';
import { slotName } from './tree';

export const TRASH_DIR: (typeof RESERVED_NAMES)[number] = '.service-trash';
const DAY = 86_400_000;

export type { TrashItem };

export interface TrashOutcome {
  /** The item now sits in the trash. */
  trashed: boolean;
  /** The item is gone for good (the driver cannot move). */
  permanent: boolean;
  item?: TrashItem;
  /** Relative path inside the storage where the item now sits ('' when not trashed). */
  trashRel: string;
}

export interface RestoreResult {
  id: number;
  path: string;
}

export class TrashService implements TrashPort {
  readonly repo: TrashRepo;
  constructor(
    private cat: Catalogue,
    private ops: StorageOps,
    private settings: SettingsStore,
    repo: TrashRepo,
    private tenants: TenantsRepo,
  ) {
    this.repo = repo;
  }

  /**
   * Moves `rel` into the trash and tells the gate it is gone. Missing →
   * `not_found`. With `permanentFallback` (the default, for user deletes) a
   * driver without move deletes the item instead (`permanent: true`);
   * without it (quarantine) the item stays where it is.
   */
  async moveToTrash(
    p: Place,
    actor: ActorRef | null,
    o: { reason?: 'delete' | 'infected'; permanentFallback?: boolean; request?: RequestMeta } = {},
  ): Promise<TrashOutcome> {
    const { storage_id: storageId, rel } = p;
    if (rel === '') throw new AppError('forbidden', { reason: 'the storage root cannot be deleted' });
    const entry = await this.ops.stat(p);
    const tenant = storageTenant(this.cat.repo, storageId);
    const audit = o.reason === 'infected' ? undefined : 'file.delete';
    const slot: Place = { storage_id: storageId, rel: joinRel(TRASH_DIR, slotName()) };
    const trashRel = joinRel(slot.rel, baseName(rel));
    let moved = false;
    if (await this.ops.canMove(storageId)) {
      try {
        await this.ops.mkdir(slot);
        await this.ops.move(p, trashRel, { overwrite: false });
        moved = true;
      } catch (e) {
        await this.ops.delete(slot).catch(() => undefined);
        // A read-only storage keeps an infected file in place, like one that cannot move.
        if (!(isAppError(e) && (e.code === 'unsupported' || (e.code === 'read_only' && o.permanentFallback === false)))) throw e;
      }
    }
    if (!moved) {
      if (o.permanentFallback === false) return { trashed: false, permanent: false, trashRel: '' };
      await this.ops.delete(p);
      await this.cat.roots.removed(storageId, rel);
      await this.ops.removed(p, { actor, request: o.request, audit, meta: { permanent: true } });
      return { trashed: false, permanent: true, trashRel: '' };
    }
    // Encrypted folders inside follow into the trash (docs/vault.md, "Boundaries").
    await this.cat.roots.moved(storageId, rel, trashRel);
    const row = await this.repo.insert(tenant, {
      storage_id: storageId,
      orig_path: rel,
      trash_rel: trashRel,
      type: entry.type,
      size: entry.type === 'dir' ? 0 : entry.size,
      reason: o.reason ?? 'delete',
      deleted_by: actor?.id ?? null,
      deleted_by_email: actor?.email ?? null,
      deleted_at: new Date().toISOString(),
    });
    await this.ops.removed(p, { actor, request: o.request, audit, meta: { trash_id: row.id, reason: row.reason } });
    return { trashed: true, permanent: false, item: this.present(row), trashRel };
  }

  /** The tenant's items on the given storages, newest first. */
  async list(s: TenantScope, storageIds: number[], limit = 200, offset = 0): Promise<{ items: TrashItem[]; total: number }> {
    const { rows, total } = await this.repo.list(s, storageIds, limit, offset);
    return { items: rows.map((r) => this.present(r)), total };
  }

  /** The tenant's item, or undefined when unknown or another tenant's. */
  byId(s: TenantScope, id: number): Promise<TrashRow | undefined> {
    return this.repo.byId(s, id);
  }

  /**
   * Moves an item back to its original path (parents are re-created). The
   * name in use again → `name_taken`; an unknown id or an item that vanished
   * from the trash → `not_found` (a vanished item's row is dropped); so is another tenant's item.
   */
  async restore(s: TenantScope, id: number, actor: ActorRef | null, request?: RequestMeta): Promise<RestoreResult> {
    const row = await this.repo.byId(s, id);
    if (!row) throw new AppError('not_found', { id });
    const at = (rel: string): Place => ({ storage_id: row.storage_id, rel });
    if (!(await this.ops.statOrNull(at(row.trash_rel)))) {
      await this.repo.remove(row, id);
      throw new AppError('not_found', { id }, undefined, 'the item is no longer in the trash');
    }
    if (await this.ops.statOrNull(at(row.orig_path))) throw new AppError('name_taken', { name: baseName(row.orig_path) });
    if (!(await this.ops.canMove(row.storage_id))) throw new AppError('unsupported', { reason: 'this storage cannot move' });
    if (parentRel(row.orig_path) !== '') await this.ops.mkdir(at(parentRel(row.orig_path)));
    // Encrypted folders inside are encrypted at the old path before their bytes arrive there, never after.
    await this.cat.roots.moved(row.storage_id, row.trash_rel, row.orig_path);
    try {
      await this.ops.move(at(row.trash_rel), row.orig_path, { overwrite: false });
    } catch (e) {
      await this.cat.roots.moved(row.storage_id, row.orig_path, row.trash_rel);
      if (isAppError(e) && e.code === 'conflict') throw new AppError('name_taken', { name: baseName(row.orig_path) });
      throw e;
    }
    await this.repo.remove(row, id);
    await this.ops.delete(at(parentRel(row.trash_rel))).catch(() => undefined);
    const ctx = { actor, request, origin: 'restore' as const };
    const tree = await this.ops.tree(at(row.orig_path));
    await this.ops.written(at(row.orig_path), tree[0].entry, { ...ctx, audit: 'file.move', meta: { restored_from_trash: id } });
    for (const item of tree.slice(1)) await this.ops.written(at(joinRel(row.orig_path, item.rel)), item.entry, ctx);
    return { id, path: uiPath(this.storageName(row.storage_id), row.orig_path) };
  }

  /** Deletes the tenant's item from the trash for good (another tenant's → `not_found`). Idempotent for an item already gone from the backend. */
  async purge(s: TenantScope, id: number): Promise<void> {
    const row = await this.repo.byId(s, id);
    if (!row) throw new AppError('not_found', { id });
    try {
      await this.ops.delete({ storage_id: row.storage_id, rel: parentRel(row.trash_rel) });
    } catch (e) {
      if (!(isAppError(e) && e.code === 'not_found')) throw e;
    }
    await this.cat.roots.removed(row.storage_id, parentRel(row.trash_rel));
    await this.repo.remove(row, id);
  }

  /**
   * Purges items older than `trash_retention_days`, tenant by tenant over every tenant; returns how many
   * went. One failing storage does not stop the rest.
   */
  async sweep(now = Date.now(), log: (m: string, e?: unknown) => void = () => {}): Promise<number> {
    const cutoff = new Date(now - this.settings.get('trash_retention_days') * DAY).toISOString();
    let n = 0;
    for (const t of await this.tenants.list()) {
      for (const row of await this.repo.olderThan(t, cutoff)) {
        try {
          await this.purge(t, row.id);
          n++;
        } catch (e) {
          log(`trash sweep: item ${row.id} could not be purged`, e);
        }
      }
    }
    return n;
  }

  /**
   * The tenant's file items whose content equals `sha256`, or equals one of
   * `files` (storage + relative path of live files). Hashes are computed on
   * first need and kept on the row; only items of a matching size are read.
   */
  async same(s: TenantScope, storageIds: number[], q: { sha256?: string; files?: Array<{ storageId: number; rel: string }> }): Promise<TrashItem[]> {
    const wanted = new Map<string, number | undefined>();
    if (q.sha256) wanted.set(q.sha256, undefined);
    for (const f of q.files ?? []) {
      const p = { storage_id: f.storageId, rel: f.rel };
      const e = await this.ops.stat(p);
      if (e.type !== 'file') throw new AppError('validation_failed', { field: 'entries', reason: 'only files can be matched' }, { field: 'entries' });
      wanted.set(await this.ops.sha256(p), e.size);
    }
    const out: TrashItem[] = [];
    const seen = new Set<number>();
    for (const [sha, size] of wanted) {
      for (const row of await this.repo.files(s, storageIds, size)) {
        if (seen.has(row.id)) continue;
        if (!row.sha256) {
          row.sha256 = await this.ops.sha256({ storage_id: row.storage_id, rel: row.trash_rel }).catch(() => null);
          if (row.sha256) await this.repo.setSha(row, row.id, row.sha256);
        }
        if (row.sha256 === sha) {
          seen.add(row.id);
          out.push(this.present(row));
        }
      }
    }
    return out;
  }

  private storageName(id: number): string {
    return this.cat.repo.ofAnyTenant(id)?.name ?? String(id);
  }

  private present(r: TrashRow): TrashItem {
    const storage = this.storageName(r.storage_id);
    return {
      id: r.id,
      storage,
      storage_id: r.storage_id,
      path: uiPath(storage, r.orig_path),
      name: baseName(r.orig_path),
      type: r.type,
      size: r.size,
      reason: r.reason,
      deleted_by: r.deleted_by_email,
      deleted_at: r.deleted_at,
    };
  }
}
