/**
 * The vault's tables (owner: vault; docs/vault.md, "Server"): one vault per person, encrypted folders, their
 * wrapped keys per member and version, and encrypted thumbnails. Every statement on `db.async`. A member-set
 * change is one serializable unit: the version check (`current + 1`), the new keys and the removal of the
 * former members' keys commit together, so two owners' tabs racing cannot both rotate to one version.
 * Every row is a tenant's (docs/tenants.md): a vault its person's, a folder its storage's, a folder's keys
 * the folder's, a thumbnail its node's; every statement names it, so another tenant's vault, person, folder
 * or thumbnail is never found, counted as a member nor written.
 */
import type { StorageRef } from '../catalogue';
import type { Db, TenantScope } from '../db';
import type { VaultsTable } from '../db/tables';
import { AppError } from '../errors';

export type VaultRow = VaultsTable;

export interface FolderRow extends TenantScope {
  id: number;
  storage_id: number;
  rel: string;
  owner_id: number;
  key_version: number;
  created_at: string;
}

export interface PersonRow {
  id: number;
  username: string;
  public_key: string;
}

const FOLDER_COLS = ['id', 'tenant_id', 'storage_id', 'rel', 'owner_id', 'key_version', 'created_at'] as const;
/** An encrypted folder as its keys' statements name it: its id and its tenant (an `EncryptedRoot` is one). */
type FolderRef = Pick<FolderRow, 'id' | 'tenant_id'>;
/** A node as its thumbnail's statements name it (a node row is one). */
type NodeRef = { id: number; tenant_id: number };

/** PostgreSQL's bigint columns arrive as strings. */
const folderOf = (r: FolderRow): FolderRow => ({
  ...r,
  id: Number(r.id),
  tenant_id: Number(r.tenant_id),
  storage_id: Number(r.storage_id),
  owner_id: Number(r.owner_id),
  key_version: Number(r.key_version),
});

export class VaultRepo {
  constructor(private db: Db) {}

  /** The vault of `userId`, a person of tenant `s` (another tenant's person has none here). */
  vault(s: TenantScope, userId: number): Promise<VaultRow | undefined> {
    return this.db.async.first(this.db.k.selectFrom('vaults').selectAll().where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId));
  }

  /** Creates the person's vault in their tenant `s`; false when they have one. */
  async create(s: TenantScope, row: Omit<VaultRow, 'tenant_id'>): Promise<boolean> {
    const ins = this.db.k
      .insertInto('vaults')
      .values({ ...row, tenant_id: s.tenant_id })
      .onConflict((c) => c.column('user_id').doNothing())
      .returning('user_id');
    return !!(await this.db.async.first(ins));
  }

  /** Replaces the passphrase's wrap and proof. */
  async rewrap(s: TenantScope, userId: number, v: Pick<VaultRow, 'kdf' | 'wrapped_private_key' | 'auth_hash' | 'updated_at'>): Promise<void> {
    await this.db.async.run(this.db.k.updateTable('vaults').set(v).where('tenant_id', '=', s.tenant_id).where('user_id', '=', userId));
  }

  /** Enabled people of tenant `s` with a vault whose name or address contains `q` (the caller excluded). */
  async people(s: TenantScope, callerId: number, q: string, limit: number): Promise<PersonRow[]> {
    let query = this.db.k
      .selectFrom('vaults as v')
      .innerJoin('users as u', 'u.id', 'v.user_id')
      .select(['u.id', 'u.username', 'v.public_key'])
      .where('v.tenant_id', '=', s.tenant_id)
      .where('u.disabled', '=', 0)
      .where('u.id', '!=', callerId)
      .orderBy('u.username')
      .limit(limit);
    if (q) {
      const like = `%${q.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
      query = query.where((eb) => eb.or([eb(eb.fn('lower', ['u.username']), 'like', eb.val(like)), eb(eb.fn('lower', ['u.email']), 'like', eb.val(like))]));
    }
    return (await this.db.async.all(query)).map((r) => ({ ...r, id: Number(r.id) }));
  }

  /** The public keys of these people's vaults in tenant `s` (people without one, or of another tenant, are absent). */
  async publicKeys(s: TenantScope, ids: number[]): Promise<Map<number, string>> {
    if (!ids.length) return new Map();
    const rows = await this.db.async.all(
      this.db.k.selectFrom('vaults').select(['user_id', 'public_key']).where('tenant_id', '=', s.tenant_id).where('user_id', 'in', ids),
    );
    return new Map(rows.map((r) => [Number(r.user_id), r.public_key]));
  }

  /**
   * Records a new encrypted folder on the storage, in its tenant (key version 0: its owner sends version 1's
   * keys next). Its id, or 'taken'.
   */
  async createFolder(storage: StorageRef, rel: string, ownerId: number, at: string): Promise<number | 'taken'> {
    const ins = this.db.k
      .insertInto('encrypted_folders')
      .values({ tenant_id: storage.tenant_id, storage_id: storage.id, rel, owner_id: ownerId, key_version: 0, created_at: at })
      .onConflict((c) => c.columns(['storage_id', 'rel']).doNothing())
      .returning('id');
    const row = await this.db.async.first(ins);
    return row ? Number(row.id) : 'taken';
  }

  /** Tenant `s`'s encrypted folder `id`, or undefined. */
  folder(s: TenantScope, id: number): Promise<FolderRow | undefined> {
    return this.db.async
      .first(this.db.k.selectFrom('encrypted_folders').select(FOLDER_COLS).where('tenant_id', '=', s.tenant_id).where('id', '=', id))
      .then((r) => r && folderOf(r));
  }

  /** Every wrapped key `userId` holds for the folder, oldest version first. */
  async keysOf(f: FolderRef, userId: number): Promise<Array<{ version: number; wrapped_key: string }>> {
    const rows = await this.db.async.all(
      this.db.k
        .selectFrom('encrypted_folder_keys')
        .select(['version', 'wrapped_key'])
        .where('tenant_id', '=', f.tenant_id)
        .where('folder_id', '=', f.id)
        .where('user_id', '=', userId)
        .orderBy('version'),
    );
    return rows.map((r) => ({ version: Number(r.version), wrapped_key: r.wrapped_key }));
  }

  /**
   * Replaces the member set with version `version`'s keys: refused (`conflict`) unless it is the folder's
   * current version + 1; keys of people no longer members are deleted; the version moves on. The keys are
   * written in the folder's tenant (`not_found` when the folder is not there).
   */
  setMembers(f: FolderRef, version: number, members: Array<{ user_id: number; wrapped_key: string }>): Promise<void> {
    const k = this.db.k;
    const read = k.selectFrom('encrypted_folders').select('key_version').where('tenant_id', '=', f.tenant_id).where('id', '=', f.id);
    const ids = members.map((m) => m.user_id);
    const insert = k
      .insertInto('encrypted_folder_keys')
      .values(members.map((m) => ({ tenant_id: f.tenant_id, folder_id: f.id, user_id: m.user_id, version, wrapped_key: m.wrapped_key })));
    const drop = k.deleteFrom('encrypted_folder_keys').where('tenant_id', '=', f.tenant_id).where('folder_id', '=', f.id).where('user_id', 'not in', ids);
    const bump = k.updateTable('encrypted_folders').set({ key_version: version }).where('tenant_id', '=', f.tenant_id).where('id', '=', f.id);
    return this.db.async.unit(
      function* (t) {
        const cur = yield* t.first(read);
        if (!cur) throw new AppError('not_found');
        if (version !== Number(cur.key_version) + 1)
          throw new AppError(
            'conflict',
            { reason: `key_version must be ${Number(cur.key_version) + 1}` },
            { field: 'key_version', expected: Number(cur.key_version) + 1 },
          );
        yield* t.run(drop);
        yield* t.run(insert);
        yield* t.run(bump);
      },
      { isolation: 'serializable' },
    );
  }

  /** Stores the node's encrypted thumbnail in its tenant, replacing one of that tenant only. */
  async putThumb(node: NodeRef, data: string, at: string): Promise<void> {
    await this.db.async.run(
      this.db.k
        .insertInto('encrypted_thumbs')
        .values({ tenant_id: node.tenant_id, node_id: node.id, data, updated_at: at })
        .onConflict((c) => c.column('node_id').doUpdateSet({ data, updated_at: at }).where('encrypted_thumbs.tenant_id', '=', node.tenant_id)),
    );
  }

  /** The node's encrypted thumbnail in its tenant, or undefined. */
  async thumb(node: NodeRef): Promise<string | undefined> {
    return (
      await this.db.async.first(this.db.k.selectFrom('encrypted_thumbs').select('data').where('tenant_id', '=', node.tenant_id).where('node_id', '=', node.id))
    )?.data;
  }

  /** Sets where each encrypted folder now is (`rel` by id, in its tenant), as one unit: the trash moved it (RootsWriter). */
  place(moves: Array<FolderRef & { rel: string }>): Promise<void> {
    const k = this.db.k;
    return this.db.async.unit(function* (t) {
      for (const m of moves) yield* t.run(k.updateTable('encrypted_folders').set({ rel: m.rel }).where('tenant_id', '=', m.tenant_id).where('id', '=', m.id));
    });
  }

  /** Deletes encrypted folders gone for good, each in its tenant (their keys go with them by cascade). */
  drop(folders: FolderRef[]): Promise<void> {
    const k = this.db.k;
    return this.db.async.unit(function* (t) {
      for (const f of folders) yield* t.run(k.deleteFrom('encrypted_folders').where('tenant_id', '=', f.tenant_id).where('id', '=', f.id));
    });
  }
}
