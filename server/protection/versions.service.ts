/**
 * Versions: before a file is overwritten (upload over it, save-text, editor
 * save) its current bytes are copied to `.versions/<path>/<slot>` and a row
 * is kept. Retention (`versions_keep_n`): unset keeps 20 per file, trimmed on
 * each snapshot; 0 keeps everything and sweeps nothing; N > 0 keeps N, on
 * each snapshot and in the daily sweep. Snapshots are never scanned: the
 * bytes were already scanned when they were written.
 */
import { Readable } from 'node:stream';
import type { Catalogue, GateNode } from '../catalogue';
import type { VersionView } from '../contract';
import type { Db } from '../db';
import type { VersionsTable } from '../db/tables';
import type { Actor, RequestMeta } from '../events';
import type { SettingsStore } from '../settings';
import type { StorageDriver } from '../storage';
import { AppError, isAppError } from '../errors';
import { isInternalPath, joinRel, parentRel, RESERVED_NAMES } from '../lib/paths';
import { slotName, statOrNull } from './tree';

export const VERSIONS_DIR: (typeof RESERVED_NAMES)[number] = '.versions';
/** Kept per file while `versions_keep_n` is unset. */
export const DEFAULT_KEEP = 20;

type VersionRow = Omit<VersionsTable, 'id'> & { id: number };

export type { VersionView };

export class VersionsService {
  constructor(private db: Db, private cat: Catalogue, private settings: SettingsStore) {}

  /**
   * Snapshots the current file at `rel` before it is replaced. Returns null
   * (and does nothing) when there is nothing to keep: no file there, a
   * folder, an empty file, or a path inside a service folder.
   */
  async snapshotBeforeOverwrite(storageId: number, rel: string, actor: Actor | null = null): Promise<VersionView | null> {
    if (rel === '' || isInternalPath(rel)) return null;
    const d = await this.cat.driverFor(storageId);
    const cur = await statOrNull(d, rel);
    if (!cur || cur.type !== 'file' || cur.size === 0) return null;
    const versionRel = joinRel(joinRel(VERSIONS_DIR, rel), slotName());
    await d.mkdir(parentRel(versionRel));
    await copyFile(d, rel, versionRel, cur.size);
    const row = this.db.sqlite
      .prepare('INSERT INTO versions (storage_id, path, version_rel, size, mtime, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *')
      .get(storageId, rel, versionRel, cur.size, Math.round(cur.mtime), actor?.id ?? null, new Date().toISOString()) as VersionRow;
    const keep = this.settings.get('versions_keep_n');
    if (keep !== 0) await this.trim(d, storageId, rel, keep ?? DEFAULT_KEEP);
    return present(row);
  }

  /** Versions of one path, newest first (also for a file that was deleted since). */
  list(storageId: number, rel: string): VersionView[] {
    return (this.db.sqlite.prepare('SELECT * FROM versions WHERE storage_id = ? AND path = ? ORDER BY id DESC').all(storageId, rel) as VersionRow[]).map(present);
  }

  /**
   * Writes version `id` back over `rel`, after snapshotting what is there now
   * (so a restore can itself be undone). A file deleted since comes back
   * (its folder is re-created). Unknown id, another file's id, or snapshot
   * bytes gone from the backend → `not_found`.
   */
  async restore(storageId: number, rel: string, id: number, actor: Actor | null, request?: RequestMeta): Promise<GateNode> {
    const row = this.db.sqlite.prepare('SELECT * FROM versions WHERE id = ? AND storage_id = ? AND path = ?').get(id, storageId, rel) as VersionRow | undefined;
    if (!row) throw new AppError('not_found', { id });
    const d = await this.cat.driverFor(storageId);
    if (!(await statOrNull(d, row.version_rel))) {
      this.db.sqlite.prepare('DELETE FROM versions WHERE id = ?').run(id);
      throw new AppError('not_found', { id }, undefined, 'the snapshot is gone from the storage');
    }
    const cur = await statOrNull(d, rel);
    if (cur?.type === 'dir') throw new AppError('conflict', { reason: 'a folder now has that name' });
    if (cur) await this.snapshotBeforeOverwrite(storageId, rel, actor);
    else if (parentRel(rel) !== '') await d.mkdir(parentRel(rel));
    await copyFile(d, row.version_rel, rel, row.size);
    return this.cat.gate.written(storageId, rel, await d.stat(rel), { actor, request, origin: 'restore', audit: 'file.upload', meta: { version_id: id } });
  }

  /** Daily sweep: trims every file to `versions_keep_n` when it is above 0; returns snapshots removed. */
  async sweep(log: (m: string, e?: unknown) => void = () => {}): Promise<number> {
    const keep = this.settings.get('versions_keep_n');
    if (keep === null || keep === 0) return 0;
    const over = this.db.sqlite.prepare('SELECT storage_id, path FROM versions GROUP BY storage_id, path HAVING count(*) > ?').all(keep) as Array<{ storage_id: number; path: string }>;
    let n = 0;
    for (const g of over) {
      try {
        n += await this.trim(await this.cat.driverFor(g.storage_id), g.storage_id, g.path, keep);
      } catch (e) {
        log(`versions sweep: ${g.path} on storage ${g.storage_id} failed`, e);
      }
    }
    return n;
  }

  /** Deletes the oldest snapshots of one file beyond `keep`. */
  private async trim(d: StorageDriver, storageId: number, rel: string, keep: number): Promise<number> {
    const old = this.db.sqlite.prepare('SELECT * FROM versions WHERE storage_id = ? AND path = ? ORDER BY id DESC LIMIT -1 OFFSET ?').all(storageId, rel, keep) as VersionRow[];
    for (const v of old) {
      await d.delete(v.version_rel).catch((e) => {
        if (!(isAppError(e) && e.code === 'not_found')) throw e;
      });
      this.db.sqlite.prepare('DELETE FROM versions WHERE id = ?').run(v.id);
    }
    return old.length;
  }
}

/** Server-side copy when the driver has one, else a streamed read into an atomic write. */
async function copyFile(d: StorageDriver, from: string, to: string, size: number): Promise<void> {
  if (d.copy) {
    try {
      return await d.copy(from, to, { overwrite: true });
    } catch (e) {
      if (!(isAppError(e) && e.code === 'unsupported')) throw e;
    }
  }
  const body: Readable = await d.read(from);
  await d.write(to, body, { size, overwrite: true });
}

const present = (r: VersionRow): VersionView => ({ id: r.id, size: r.size, modified: new Date(r.mtime).toISOString(), created_at: r.created_at, created_by: r.created_by });
