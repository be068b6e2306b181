/**
 * Access for every door, decided in one place: which storages an actor may
 * open, and whether a path may be read (`viewer`) or changed (`editor`).
 *   - a person gets their effective level (catalogue/access: role, grants,
 *     read-only storages);
 *   - a link acts as its creator, confined to the shared item: anything
 *     outside it does not exist for the link;
 *   - system work may reach every storage.
 * A storage the actor cannot open, or a path outside a confinement, is
 * `not_found` (as if it did not exist); a visible path without the level is
 * `forbidden`; a change to a read-only storage is `read_only`.
 */
import type { Actor } from '../auth';
import { atLeast, effectiveLevel, type Catalogue, type Level, type StorageRow } from '../catalogue';
import { AppError } from '../errors';
import { isWithin, parseUiPath } from '../lib/paths';

/** A path on one storage, by id: how jobs and internal callers address files. */
export interface Place {
  storage_id: number;
  rel: string;
}

/** A resolved path with the actor's level on its storage. */
export interface Target {
  storage: StorageRow;
  rel: string;
  level: Level;
  place: Place;
}

export interface TargetOptions {
  /** Service folders may be addressed (trash and version views). */
  allowReserved?: boolean;
  /** Judge the level as if the storage were writable (sharing a read-only storage still needs editor rights). */
  ignoreReadOnly?: boolean;
}

export class Access {
  constructor(private cat: Catalogue) {}

  /** Storages the actor can open with their levels, in id order (one grants query for the set). */
  visible(a: Actor): Array<{ storage: StorageRow; level: Level }> {
    const grants = this.cat.repo.allGrants();
    const out: Array<{ storage: StorageRow; level: Level }> = [];
    for (const s of this.cat.repo.all()) {
      if (a.kind === 'link' && s.id !== a.share.storage_id) continue;
      const level = this.levelOn(a, s, () => grants.get(s.id) ?? []);
      if (level) out.push({ storage: s, level });
    }
    return out;
  }

  /**
   * Resolves a UI path (`/<storage name or uid>/<rel>`) or a place for the
   * actor and checks `need` (see the module comment for the refusals).
   */
  target(a: Actor, path: string | Place, need: Level = 'viewer', opts: TargetOptions = {}): Target {
    let s: StorageRow | undefined;
    let rel: string;
    if (typeof path === 'string') {
      const parsed = parseUiPath(path, opts);
      if (parsed.storage === null) throw new AppError('bad_path', {}, { reason: 'a storage is required' });
      s = this.cat.repo.byNameOrUid(parsed.storage);
      rel = parsed.rel;
    } else {
      s = this.cat.repo.byId(path.storage_id);
      rel = path.rel;
    }
    const shown = typeof path === 'string' ? path : rel;
    const judged = s && opts.ignoreReadOnly ? { ...s, read_only: 0 } : s;
    const level = judged ? this.levelOn(a, judged, () => this.cat.repo.grants(judged.id)) : null;
    if (!s || !level || !this.within(a, s.id, rel)) throw new AppError('not_found', { path: shown });
    if (need !== 'viewer' && s.read_only && !opts.ignoreReadOnly) throw new AppError('read_only');
    if (!atLeast(level, need)) throw new AppError('forbidden');
    return { storage: s, rel, level, place: { storage_id: s.id, rel } };
  }

  /** The actor's level on one storage, or null when it cannot open it. */
  private levelOn(a: Actor, s: StorageRow, grants: () => ReturnType<Catalogue['repo']['grants']>): Level | null {
    if (a.kind === 'system') return 'admin';
    return effectiveLevel(a.principal, s, grants());
  }

  /** Whether `rel` lies inside the actor's confinement (a link's shared item). */
  private within(a: Actor, storageId: number, rel: string): boolean {
    if (a.kind !== 'link') return true;
    return storageId === a.share.storage_id && (a.share.rel === '' || isWithin(rel, a.share.rel));
  }
}
