/**
 * The vault's tables (owner: vault; docs/vault.md, "Server"): one vault per person, encrypted folders, their
 * wrapped keys per member and version, and encrypted thumbnails. Every statement on `db.async`. A member-set
 * change is one serializable unit: the version check (`current + 1`), the new keys and the removal of the
 * former members' keys commit together, so two owners' tabs racing cannot both rotate to one version.
 */
import type { Db } from '../db';
import type { VaultsTable } from '../db/tables';
import { AppError } from '../errors';

export type VaultRow = VaultsTable;

export interface FolderRow {
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

const FOLDER_COLS = ['id', 'storage_id', 'rel', 'owner_id', 'key_version', 'created_at'] as const;

/** PostgreSQL's bigint columns arrive as strings. */
const folderOf = (r: FolderRow): FolderRow => ({
  ...r,
  id: Number(r.id),
  storage_id: Number(r.storage_id),
  owner_id: Number(r.owner_id),
  key_version: Number(r.key_version),
});

export class VaultRepo {
  constructor(private db: Db) {}

  vault(userId: number): Promise<VaultRow | undefined> {
    return this.db.async.first(this.db.k.selectFrom('vaults').selectAll().where('user_id', '=', userId));
  }

  /** Creates the person's vault; false when they have one. */
  async create(row: VaultRow): Promise<boolean> {
    const ins = this.db.k
      .insertInto('vaults')
      .values(row)
      .onConflict((c) => c.column('user_id').doNothing())
      .returning('user_id');
    return !!(await this.db.async.first(ins));
  }

  /** Replaces the passphrase's wrap and proof. */
  async rewrap(userId: number, v: Pick<VaultRow, 'kdf' | 'wrapped_private_key' | 'auth_hash' | 'updated_at'>): Promise<void> {
    await this.db.async.run(this.db.k.updateTable('vaults').set(v).where('user_id', '=', userId));
  }

  /** Enabled people with a vault whose name or address contains `q` (the caller excluded). */
  async people(callerId: number, q: string, limit: number): Promise<PersonRow[]> {
    let query = this.db.k
      .selectFrom('vaults as v')
      .innerJoin('users as u', 'u.id', 'v.user_id')
      .select(['u.id', 'u.username', 'v.public_key'])
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

  /** The public keys of these people's vaults (people without one are absent). */
  async publicKeys(ids: number[]): Promise<Map<number, string>> {
    if (!ids.length) return new Map();
    const rows = await this.db.async.all(this.db.k.selectFrom('vaults').select(['user_id', 'public_key']).where('user_id', 'in', ids));
    return new Map(rows.map((r) => [Number(r.user_id), r.public_key]));
  }

  /** Records a new encrypted folder (key version 0: its owner sends version 1's keys next). Its id, or 'taken'. */
  async createFolder(storageId: number, rel: string, ownerId: number, at: string): Promise<number | 'taken'> {
    const ins = this.db.k
      .insertInto('encrypted_folders')
      .values({ storage_id: storageId, rel, owner_id: ownerId, key_version: 0, created_at: at })
      .onConflict((c) => c.columns(['storage_id', 'rel']).doNothing())
      .returning('id');
    const row = await this.db.async.first(ins);
    return row ? Number(row.id) : 'taken';
  }

  folder(id: number): Promise<FolderRow | undefined> {
    return this.db.async.first(this.db.k.selectFrom('encrypted_folders').select(FOLDER_COLS).where('id', '=', id)).then((r) => r && folderOf(r));
  }

  /** Every wrapped key `userId` holds for the folder, oldest version first. */
  async keysOf(folderId: number, userId: number): Promise<Array<{ version: number; wrapped_key: string }>> {
    const rows = await this.db.async.all(
      this.db.k
        .selectFrom('encrypted_folder_keys')
        .select(['version', 'wrapped_key'])
        .where('folder_id', '=', folderId)
        .where('user_id', '=', userId)
        .orderBy('version'),
    );
    return rows.map((r) => ({ version: Number(r.version), wrapped_key: r.wrapped_key }));
  }

  /**
   * Replaces the member set with version `version`'s keys: refused (`conflict`) unless it is the folder's
   * current version + 1; keys of people no longer members are deleted; the version moves on.
   */
  setMembers(folderId: number, version: number, members: Array<{ user_id: number; wrapped_key: string }>): Promise<void> {
    const k = this.db.k;
    const read = k.selectFrom('encrypted_folders').select('key_version').where('id', '=', folderId);
    const ids = members.map((m) => m.user_id);
    const insert = k
      .insertInto('encrypted_folder_keys')
      .values(members.map((m) => ({ folder_id: folderId, user_id: m.user_id, version, wrapped_key: m.wrapped_key })));
    const drop = k.deleteFrom('encrypted_folder_keys').where('folder_id', '=', folderId).where('user_id', 'not in', ids);
    const bump = k.updateTable('encrypted_folders').set({ key_version: version }).where('id', '=', folderId);
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

  async putThumb(nodeId: number, data: string, at: string): Promise<void> {
    await this.db.async.run(
      this.db.k
        .insertInto('encrypted_thumbs')
        .values({ node_id: nodeId, data, updated_at: at })
        .onConflict((c) => c.column('node_id').doUpdateSet({ data, updated_at: at })),
    );
  }

  async thumb(nodeId: number): Promise<string | undefined> {
    return (await this.db.async.first(this.db.k.selectFrom('encrypted_thumbs').select('data').where('node_id', '=', nodeId)))?.data;
  }

  /** Sets where each encrypted folder now is (`rel` by id), as one unit: the trash moved it (RootsWriter). */
  place(moves: Array<{ id: number; rel: string }>): Promise<void> {
    const k = this.db.k;
    return this.db.async.unit(function* (t) {
      for (const m of moves) yield* t.run(k.updateTable('encrypted_folders').set({ rel: m.rel }).where('id', '=', m.id));
    });
  }

  /** Deletes encrypted folders gone for good (their keys go with them by cascade). */
  drop(ids: number[]): Promise<void> {
    const k = this.db.k;
    return this.db.async.unit(function* (t) {
      if (ids.length) yield* t.run(k.deleteFrom('encrypted_folders').where('id', 'in', ids));
    });
  }
}
