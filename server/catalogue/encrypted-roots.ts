/**
 * The roots of encrypted folders (docs/vault.md, "Every door"), kept in memory: the file service's access
 * check asks on every request whether a path lies inside one, so the answer never reads the database.
 * With no encrypted folder on a storage the question is one Map lookup that finds nothing. The vault module
 * writes the tables and calls `changed()` after each change committed (a re-read, then a notice to the other
 * instances on PostgreSQL, which re-read). A notice may be lost (the channel reconnects with `resync`), so on
 * a shared database a copy older than REFRESH_MS is also read again in the background at its next use: a
 * membership removed on another instance stops counting here within that time at worst.
 * Members are the owner and the people holding the folder's current key version; membership counts as a folder grant
 * (editor at the root, capped like any grant by role and read-only storages).
 */
import type { ChangeChannel, Db, TenantScope } from '../db';
import { reloadOn } from '../db/channel';
import { isWithin } from '../lib/paths';
import { EncryptedRootsRepo } from './encrypted-roots.repo';
import type { Grant } from './storages.repo';

export interface EncryptedRoot extends TenantScope {
  id: number;
  storage_id: number;
  rel: string;
  owner_id: number;
  key_version: number;
  members: ReadonlySet<number>;
}

/** The change notice between instances: "the encrypted folders or their members changed, read them again". */
const NOTICE = 'encrypted-roots';
/** How old a copy may get on a shared database before a use reads it again (lost notices). */
export const REFRESH_MS = 30_000;

interface Copy {
  byStorage: Map<number, EncryptedRoot[]>;
  byId: Map<number, EncryptedRoot>;
  grants: Map<number, Grant[]>;
  at: number;
}

/**
 * The vault module's writes the trash needs (it owns the tables, server/db/owners.ts): where roots now are,
 * and roots gone for good. Given once at composition (`useWriter`), as the vault is made after the catalogue.
 */
export interface RootsWriter {
  place(moves: Array<{ id: number; tenant_id: number; rel: string }>): Promise<void>;
  drop(roots: Array<{ id: number; tenant_id: number }>): Promise<void>;
}

const empty = (): Copy => ({ byStorage: new Map(), byId: new Map(), grants: new Map(), at: Date.now() });

export class EncryptedRoots {
  private repo: EncryptedRootsRepo;
  private copy = empty();
  private channel: ChangeChannel | null = null;
  /** Re-reads are numbered: an older one that answers late never replaces a newer copy. */
  private started = 0;
  private applied = 0;
  private refreshing = false;
  private writer: RootsWriter | null = null;

  /** `tenants`: every tenant that has a storage (an encrypted folder is on one), read at each re-read. */
  constructor(
    db: Db,
    private log: (msg: string, err?: unknown) => void,
    private tenants: () => readonly TenantScope[],
  ) {
    this.repo = new EncryptedRootsRepo(db);
  }

  /** The vault module's writer (see RootsWriter). */
  useWriter(w: RootsWriter): void {
    this.writer = w;
  }

  private written(): RootsWriter {
    if (!this.writer) throw new Error('encrypted roots: no writer (the vault module gives it at composition)');
    return this.writer;
  }

  /** Reads the roots; awaited before the first request (serving without them would open encrypted folders). */
  start(): Promise<void> {
    return this.reload();
  }

  attachChannel(channel: ChangeChannel): void {
    this.channel = channel;
    reloadOn(
      channel,
      [NOTICE],
      () => this.reload(),
      (e) => this.log('encrypted folders could not be read again now', e),
    );
  }

  /** After the vault module's write committed: read again, and tell the other instances. */
  async changed(): Promise<void> {
    await this.reload();
    this.channel?.publish(NOTICE, null);
  }

  /** The encrypted folder `rel` lies in (at its root or below; the innermost of nested ones), or null. */
  rootOf(storageId: number, rel: string): EncryptedRoot | null {
    const list = this.current().byStorage.get(storageId);
    if (!list) return null;
    let found: EncryptedRoot | null = null;
    for (const r of list) if (isWithin(rel, r.rel) && (!found || r.rel.length > found.rel.length)) found = r;
    return found;
  }

  /** Encrypted roots at `rel` or below it ('' is the whole storage). */
  below(storageId: number, rel: string): EncryptedRoot[] {
    return (this.current().byStorage.get(storageId) ?? []).filter((r) => isWithin(r.rel, rel));
  }

  /** Whether the storage holds any encrypted folder (false: nothing to check). */
  any(storageId: number): boolean {
    return this.current().byStorage.has(storageId);
  }

  anyAtAll(): boolean {
    return this.current().byId.size > 0;
  }

  byId(id: number): EncryptedRoot | undefined {
    return this.current().byId.get(id);
  }

  /**
   * The trash moved `from` (and every root at or below it) to `to` on the storage: the roots follow, so the
   * trashed folder stays encrypted where it now is, a folder later made at the old path is plain, and a
   * restore (the move back) makes it encrypted again. Nothing to do (no write) when no root is there.
   */
  async moved(storageId: number, from: string, to: string): Promise<void> {
    const hit = this.below(storageId, from);
    if (!hit.length) return;
    await this.written().place(hit.map((r) => ({ id: r.id, tenant_id: r.tenant_id, rel: to + r.rel.slice(from.length) })));
    await this.changed();
  }

  /** `rel` (a trash slot being purged, or a folder deleted for good) is gone: the roots at or below it go too. */
  async removed(storageId: number, rel: string): Promise<void> {
    const hit = this.below(storageId, rel);
    if (!hit.length) return;
    await this.written().drop(hit);
    await this.changed();
  }

  /** Every encrypted folder `userId` is a member of. */
  of(userId: number): EncryptedRoot[] {
    return [...this.current().byId.values()].filter((r) => r.members.has(userId));
  }

  /** Membership as folder grants on the storage (empty without encrypted folders there). */
  grants(storageId: number): readonly Grant[] {
    return this.current().grants.get(storageId) ?? NONE;
  }

  private current(): Copy {
    if (this.channel?.shared && !this.refreshing && Date.now() - this.copy.at > REFRESH_MS) {
      this.refreshing = true;
      this.reload()
        .catch((e) => this.log('encrypted folders could not be read again now', e))
        .finally(() => (this.refreshing = false));
    }
    return this.copy;
  }

  private async reload(): Promise<void> {
    const n = ++this.started;
    const { roots, members } = await this.repo.all(this.tenants());
    if (n < this.applied) return;
    this.applied = n;
    const copy = empty();
    const sets = new Map<number, Set<number>>();
    for (const m of members) {
      const fid = Number(m.folder_id);
      (sets.get(fid) ?? sets.set(fid, new Set()).get(fid)!).add(Number(m.user_id));
    }
    for (const r of roots) {
      const id = Number(r.id);
      const root: EncryptedRoot = Object.freeze({
        id,
        tenant_id: Number(r.tenant_id),
        storage_id: Number(r.storage_id),
        rel: r.rel,
        owner_id: Number(r.owner_id),
        key_version: Number(r.key_version),
        // The owner is always a member (a new folder's owner sends version 1's keys after it exists: its id is in them).
        members: new Set([Number(r.owner_id), ...(sets.get(id) ?? [])]),
      });
      copy.byId.set(id, root);
      (copy.byStorage.get(root.storage_id) ?? copy.byStorage.set(root.storage_id, []).get(root.storage_id)!).push(root);
      const grants = copy.grants.get(root.storage_id) ?? copy.grants.set(root.storage_id, []).get(root.storage_id)!;
      for (const uid of root.members) grants.push({ id: -id, user_id: uid, group: null, level: 'editor', path: root.rel });
    }
    this.copy = copy;
  }
}

const NONE: readonly Grant[] = Object.freeze([]);
