/**
 * Access for every door, decided in one place: which storages an actor may
 * open, and whether a path may be read (`viewer`) or changed (`editor`).
 *   - a person gets their effective level (catalogue/access: role, grants,
 *     read-only storages), capped by their permissions (`files:read`,
 *     `files:write`: custom roles and exceptions, auth/permissions);
 *   - a link acts as its creator, confined to the shared item: anything
 *     outside it does not exist for the link;
 *   - a key acts as its owner, narrowed to its verbs and confined to its
 *     root: outside the root is `permission_denied`; the folders on the way
 *     down to the root may be listed (each shows only the next folder on the
 *     way) but not read, downloaded or changed;
 *   - system work may reach every storage.
 * A storage the actor cannot open, or a path outside a link, is `not_found`
 * (as if it did not exist); a visible path without the level is `forbidden`;
 * a permission the actor lacks is `permission_denied` (with `permission` and
 * `source`); a change to a read-only storage is `read_only`; a change to a
 * file an app has locked is `locked` (catalogue/file-locks), for everyone
 * but the lock's holder.
 * Inside an encrypted folder (catalogue/encrypted-roots, docs/vault.md) only its members pass (their
 * membership is a folder grant); anyone else, admins included, gets `encrypted`. A door may see encrypted
 * folders differently (`TargetOptions.encrypted`): refused for everyone (the assistant, apps), absent
 * (gateways by default), or read-only ciphertext for members (gateways when set so).
 */
import { actorTenant, can, requirePermission, type Actor } from '../auth';
import { atLeast, effectiveLevel, grantedFolders, type Catalogue, type EncryptedRoot, type Grant, type Level, type StorageRow } from '../catalogue';
import { AppError } from '../errors';
import { isWithin, parseUiPath, uiPath } from '../lib/paths';

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
  /**
   * Set when the path is a folder on the way down to the actor's confinement
   * (only with `TargetOptions.passage`): the one child name it may show.
   */
  passage?: string;
  /** Every name `passage` stands for when several granted folders lie below (passage is the first). */
  passages?: string[];
}

export interface TargetOptions {
  /** Service folders may be addressed (trash and version views). */
  allowReserved?: boolean;
  /**
   * Judge the level as if the storage were writable and the file unlocked (sharing a read-only storage
   * still needs editor rights; an upload's clean-up lets go of what it holds).
   */
  ignoreReadOnly?: boolean;
  /** Token hashes of the app locks the caller holds (ActorFiles.holding): those files stay writable for it. */
  heldLocks?: readonly string[];
  /** A folder on the way down to a key's root may be named (listings); see `Target.passage`. */
  passage?: boolean;
  /** The permission the call needs; default `files:read` for `viewer`, `files:write` above. */
  permission?: string;
  /** How this door meets encrypted folders (default `members`); see EncryptedMode. */
  encrypted?: EncryptedMode;
}

/**
 * How a door meets encrypted folders: `members` (their members read and write ciphertext; the web UI, API
 * keys, links of a member); `refuse` (`encrypted` for everyone: the assistant, apps, server-side editors);
 * `hidden` (they do not exist: `not_found`; gateways by default); `read` (members read ciphertext, nobody
 * writes: gateways set to `ciphertext`).
 */
export type EncryptedMode = 'members' | 'refuse' | 'hidden' | 'read';

/** The part of the tree an actor is confined to: a link's shared item or a key's root (null: none). */
export function confinement(a: Actor): Place | null {
  if (a.kind === 'link') return { storage_id: a.share.storage_id, rel: a.share.rel };
  if (a.kind === 'key') return a.key.root;
  return null;
}

export class Access {
  constructor(private cat: Catalogue) {}

  /** The storage `id` as the actor may address it: its tenant's, or any for system work bound to no tenant. */
  private storageById(a: Actor, id: number): StorageRow | undefined {
    return a.kind === 'system' && !a.tenant ? this.cat.repo.ofAnyTenant(id) : this.cat.repo.byId(actorTenant(a), id);
  }

  /**
   * Storages the actor can open with their levels, in id order (one grants query for the set). A storage
   * the actor only holds folder grants on (a home folder) is listed read-only with those folders as `through`.
   */
  visible(a: Actor, mode: EncryptedMode = 'members'): Array<{ storage: StorageRow; level: Level; through?: string[] }> {
    if (a.kind !== 'system' && !can(a, 'files:read')) return [];
    const grants = this.cat.repo.allGrants(actorTenant(a));
    const members = mode === 'members' || mode === 'read';
    const inside = confinement(a);
    const writes = can(a, 'files:write');
    const out: Array<{ storage: StorageRow; level: Level; through?: string[] }> = [];
    // System work sees every tenant's storages (its level ignores grants), or its own tenant's when it has one.
    for (const s of a.kind === 'system' && !a.tenant ? this.cat.repo.everyTenant() : this.cat.repo.all(actorTenant(a))) {
      if (inside && s.id !== inside.storage_id) continue;
      const list = members ? this.withMembership(s.id, grants.get(s.id) ?? []) : (grants.get(s.id) ?? []);
      const level = this.levelOn(a, s, list);
      // A storage a key only passes through on the way to its root is shown read-only.
      if (level) out.push({ storage: s, level: (inside && inside.rel !== '') || !writes ? 'viewer' : level });
      else if (a.kind !== 'system') {
        const through = grantedFolders(a.principal, s, list);
        if (through.length) out.push({ storage: s, level: 'viewer', through });
      }
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
      s = this.cat.repo.byNameOrUid(actorTenant(a), parsed.storage);
      rel = parsed.rel;
    } else {
      s = this.storageById(a, path.storage_id);
      rel = path.rel;
    }
    const shown = typeof path === 'string' ? path : rel;
    const judged = s && opts.ignoreReadOnly ? { ...s, read_only: 0 } : s;
    const mode = opts.encrypted ?? 'members';
    const members = mode === 'members' || mode === 'read';
    const root = s ? this.cat.roots.rootOf(s.id, rel) : null;
    // The row is its own tenant's scope: its grants are read there.
    const own = judged ? this.cat.repo.grants(judged, judged.id) : [];
    const grants = judged && members ? this.withMembership(judged.id, own) : own;
    let level = judged ? this.levelOn(a, judged, grants, rel) : null;
    // Only folder grants here (a home folder): the storage is passed through on the way to them.
    const through = judged && !level && a.kind !== 'system' ? grantedFolders(a.principal, judged, grants) : [];
    if (!s || (!level && !through.length)) throw new AppError('not_found', { path: shown });
    this.checkEncrypted(a, shown, need, mode, root);
    const permission = opts.permission ?? (need === 'viewer' ? 'files:read' : 'files:write');
    let passage = this.confine(a, s, rel, shown, permission, need === 'viewer' && !!opts.passage);
    if (need !== 'viewer' && s.read_only && !opts.ignoreReadOnly) throw new AppError('read_only');
    let passages: string[] | undefined;
    if (!level) {
      // Outside the granted folders: a folder on the way down to them may be listed (each shows only the
      // next folders on the way); anything else answers `forbidden`, whether it exists or not.
      const next = [...new Set(through.filter((f) => f !== rel && isWithin(f, rel)).map((f) => f.slice(rel === '' ? 0 : rel.length + 1).split('/')[0]))];
      if (need !== 'viewer' || !opts.passage || !next.length) throw new AppError('forbidden');
      level = 'viewer';
      passage ??= next[0];
      if (next.length > 1) passages = next;
    }
    if (!atLeast(level, need)) throw new AppError('forbidden');
    requirePermission(a, permission);
    if (need !== 'viewer' && !opts.ignoreReadOnly && rel !== '') this.cat.locks.check(s.id, rel, opts.heldLocks);
    const shownLevel = passage !== undefined || !can(a, 'files:write') ? 'viewer' : level;
    return { storage: s, rel, level: shownLevel, place: { storage_id: s.id, rel }, ...(passage !== undefined && { passage }), ...(passages && { passages }) };
  }

  /** The storage's grants with encrypted folders' memberships as folder grants (the same array without any). */
  private withMembership(storageId: number, grants: readonly Grant[]): Grant[] {
    const extra = this.cat.roots.grants(storageId);
    return (extra.length ? [...grants, ...extra] : grants) as Grant[];
  }

  /**
   * The encrypted-folder rule for a path inside `root` (see EncryptedMode). System work passes: versions, the
   * trash and replication copy ciphertext as it is.
   */
  private checkEncrypted(a: Actor, shown: string, need: Level, mode: EncryptedMode, root: EncryptedRoot | null): void {
    if (!root || a.kind === 'system') return;
    if (mode === 'hidden') throw new AppError('not_found', { path: shown });
    if (mode === 'refuse' || !root.members.has(a.principal.id) || (mode === 'read' && need !== 'viewer')) throw new AppError('encrypted', { path: shown });
  }

  /** The actor's level on one storage (at `rel` when given, counting folder grants), or null. */
  private levelOn(a: Actor, s: StorageRow, grants: readonly Grant[], rel?: string): Level | null {
    if (a.kind === 'system') return 'admin';
    return effectiveLevel(a.principal, s, grants, rel);
  }

  /**
   * Checks `rel` against the actor's confinement: inside → undefined; a
   * folder on the way down to a key's root, when `passage` is allowed → the
   * next name on the way; otherwise a link answers `not_found` and a key
   * `permission_denied`.
   */
  private confine(a: Actor, s: StorageRow, rel: string, shown: string, permission: string, passage: boolean): string | undefined {
    const c = confinement(a);
    if (!c || (s.id === c.storage_id && isWithin(rel, c.rel))) return undefined;
    if (a.kind === 'link') throw new AppError('not_found', { path: shown });
    if (passage && s.id === c.storage_id && isWithin(c.rel, rel)) return c.rel.slice(rel === '' ? 0 : rel.length + 1).split('/')[0];
    const root = this.storageById(a, c.storage_id);
    const where = root ? uiPath(root.name, c.rel) : '';
    throw new AppError('permission_denied', { permission, source: 'key_root', root: where }, { permission, source: 'key_root', root: where });
  }
}
