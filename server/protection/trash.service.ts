/**
 * The trash. A delete moves the item into `.service-trash/<slot>/<name>` on
 * its own storage (one slot folder per item, so equal names never collide)
 * and records its original path and deleter; the catalogue forgets the row
 * through the write gate, so listings and search no longer show it. Restore
 * moves it back (`name_taken` when the name is in use again) and announces
 * the whole subtree through the gate with origin `restore`, which re-scans
 * it. A storage whose driver cannot move deletes permanently and says so.
 */
import type { Catalogue } from '../catalogue';
import type { TrashItem } from '../contract';
import type { Actor, RequestMeta } from '../events';
import type { SettingsStore } from '../settings';
import { AppError, isAppError } from '../errors';
import { baseName, joinRel, parentRel, uiPath, RESERVED_NAMES } from '../lib/paths';
import { TrashRepo, type TrashRow } from './trash.repo';
import { sha256Of, slotName, statOrNull, subtree } from './tree';

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

export class TrashService {
  readonly repo: TrashRepo;
  constructor(private cat: Catalogue, private settings: SettingsStore, repo: TrashRepo) {
    this.repo = repo;
  }

  /**
   * Moves `rel` into the trash and tells the gate it is gone. Missing →
   * `not_found`. With `permanentFallback` (the default, for user deletes) a
   * driver without move deletes the item instead (`permanent: true`);
   * without it (quarantine) the item stays where it is.
   */
  async moveToTrash(storageId: number, rel: string, actor: Actor | null, o: { reason?: 'delete' | 'infected'; permanentFallback?: boolean; request?: RequestMeta } = {}): Promise<TrashOutcome> {
    if (rel === '') throw new AppError('forbidden', { reason: 'the storage root cannot be deleted' });
    const d = await this.cat.driverFor(storageId);
    const entry = await d.stat(rel);
    const audit = o.reason === 'infected' ? undefined : 'file.delete';
    const slot = joinRel(TRASH_DIR, slotName());
    const trashRel = joinRel(slot, baseName(rel));
    let moved = false;
    if (d.move) {
      try {
        await d.mkdir(slot);
        await d.move(rel, trashRel, { overwrite: false });
        moved = true;
      } catch (e) {
        await d.delete(slot).catch(() => undefined);
        if (!(isAppError(e) && e.code === 'unsupported')) throw e;
      }
    }
    if (!moved) {
      if (o.permanentFallback === false) return { trashed: false, permanent: false, trashRel: '' };
      await d.delete(rel);
      await this.cat.gate.removed(storageId, rel, { actor, request: o.request, audit, meta: { permanent: true } });
      return { trashed: false, permanent: true, trashRel: '' };
    }
    const row = this.repo.insert({
      storage_id: storageId, orig_path: rel, trash_rel: trashRel, type: entry.type, size: entry.type === 'dir' ? 0 : entry.size,
      reason: o.reason ?? 'delete', deleted_by: actor?.id ?? null, deleted_by_email: actor?.email ?? null, deleted_at: new Date().toISOString(),
    });
    await this.cat.gate.removed(storageId, rel, { actor, request: o.request, audit, meta: { trash_id: row.id, reason: row.reason } });
    return { trashed: true, permanent: false, item: this.present(row), trashRel };
  }

  /** Items on the given storages, newest first. */
  list(storageIds: number[], limit = 200, offset = 0): { items: TrashItem[]; total: number } {
    const { rows, total } = this.repo.list(storageIds, limit, offset);
    return { items: rows.map((r) => this.present(r)), total };
  }

  byId(id: number): TrashRow | undefined {
    return this.repo.byId(id);
  }

  /**
   * Moves an item back to its original path (parents are re-created). The
   * name in use again → `name_taken`; an unknown id or an item that vanished
   * from the trash → `not_found` (a vanished item's row is dropped).
   */
  async restore(id: number, actor: Actor | null, request?: RequestMeta): Promise<RestoreResult> {
    const row = this.repo.byId(id);
    if (!row) throw new AppError('not_found', { id });
    const d = await this.cat.driverFor(row.storage_id);
    if (!(await statOrNull(d, row.trash_rel))) {
      this.repo.remove(id);
      throw new AppError('not_found', { id }, undefined, 'the item is no longer in the trash');
    }
    if (await statOrNull(d, row.orig_path)) throw new AppError('name_taken', { name: baseName(row.orig_path) });
    if (!d.move) throw new AppError('unsupported', { reason: 'this storage cannot move' });
    if (parentRel(row.orig_path) !== '') await d.mkdir(parentRel(row.orig_path));
    try {
      await d.move(row.trash_rel, row.orig_path, { overwrite: false });
    } catch (e) {
      if (isAppError(e) && e.code === 'conflict') throw new AppError('name_taken', { name: baseName(row.orig_path) });
      throw e;
    }
    this.repo.remove(id);
    await d.delete(parentRel(row.trash_rel)).catch(() => undefined);
    const ctx = { actor, request, origin: 'restore' as const };
    await this.cat.gate.written(row.storage_id, row.orig_path, await d.stat(row.orig_path), { ...ctx, audit: 'file.move', meta: { restored_from_trash: id } });
    if (row.type === 'dir') for (const item of await subtree(d, row.orig_path)) await this.cat.gate.written(row.storage_id, item.path, item.entry, ctx);
    return { id, path: uiPath(this.storageName(row.storage_id), row.orig_path) };
  }

  /** Deletes an item from the trash for good. Idempotent for an item already gone from the backend. */
  async purge(id: number): Promise<void> {
    const row = this.repo.byId(id);
    if (!row) throw new AppError('not_found', { id });
    const d = await this.cat.driverFor(row.storage_id);
    try {
      await d.delete(parentRel(row.trash_rel));
    } catch (e) {
      if (!(isAppError(e) && e.code === 'not_found')) throw e;
    }
    this.repo.remove(id);
  }

  /** Purges items older than `trash_retention_days`; returns how many went. One failing storage does not stop the rest. */
  async sweep(now = Date.now(), log: (m: string, e?: unknown) => void = () => {}): Promise<number> {
    const cutoff = new Date(now - this.settings.get('trash_retention_days') * DAY).toISOString();
    let n = 0;
    for (const row of this.repo.olderThan(cutoff)) {
      try {
        await this.purge(row.id);
        n++;
      } catch (e) {
        log(`trash sweep: item ${row.id} could not be purged`, e);
      }
    }
    return n;
  }

  /**
   * File items whose content equals `sha256`, or equals one of `files`
   * (storage + relative path of live files). Hashes are computed on first
   * need and kept on the row; only items of a matching size are read.
   */
  async same(storageIds: number[], q: { sha256?: string; files?: Array<{ storageId: number; rel: string }> }): Promise<TrashItem[]> {
    const wanted = new Map<string, number | undefined>();
    if (q.sha256) wanted.set(q.sha256, undefined);
    for (const f of q.files ?? []) {
      const d = await this.cat.driverFor(f.storageId);
      const e = await d.stat(f.rel);
      if (e.type !== 'file') throw new AppError('validation_failed', { field: 'entries', reason: 'only files can be matched' }, { field: 'entries' });
      wanted.set(await sha256Of(d, f.rel), e.size);
    }
    const out: TrashItem[] = [];
    const seen = new Set<number>();
    for (const [sha, size] of wanted) {
      for (const row of this.repo.files(storageIds, size)) {
        if (seen.has(row.id)) continue;
        if (!row.sha256) {
          const d = await this.cat.driverFor(row.storage_id);
          row.sha256 = await sha256Of(d, row.trash_rel).catch(() => null);
          if (row.sha256) this.repo.setSha(row.id, row.sha256);
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
    return this.cat.repo.byId(id)?.name ?? String(id);
  }

  private present(r: TrashRow): TrashItem {
    const storage = this.storageName(r.storage_id);
    return {
      id: r.id, storage, storage_id: r.storage_id, path: uiPath(storage, r.orig_path), name: baseName(r.orig_path), type: r.type, size: r.size,
      reason: r.reason, deleted_by: r.deleted_by_email, deleted_at: r.deleted_at,
    };
  }
}
