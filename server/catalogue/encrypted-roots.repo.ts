/**
 * Reads the encrypted folders and their members for the roots index (encrypted-roots.ts), in one go:
 * encrypted folders are few. The tables are the vault module's (it writes them, also where a root goes
 * when the trash moves it, through the `RootsWriter` it gives encrypted-roots.ts).
 */
import type { Db, TenantScope } from '../db';

export interface RootRow extends TenantScope {
  id: number;
  storage_id: number;
  rel: string;
  owner_id: number;
  key_version: number;
}

export class EncryptedRootsRepo {
  constructor(private db: Db) {}

  /**
   * Every encrypted folder of these tenants (system work: the tenants that have a storage, as a folder is on
   * one) and, per folder, the people holding its current key version (its members).
   */
  async all(tenants: readonly TenantScope[]): Promise<{ roots: RootRow[]; members: Array<{ folder_id: number; user_id: number }> }> {
    if (!tenants.length) return { roots: [], members: [] };
    const ids = tenants.map((t) => t.tenant_id);
    const k = this.db.k;
    const roots = k
      .selectFrom('encrypted_folders')
      .select(['id', 'tenant_id', 'storage_id', 'rel', 'owner_id', 'key_version'])
      .where('tenant_id', 'in', ids)
      .orderBy('id');
    const members = k
      .selectFrom('encrypted_folder_keys as k')
      .innerJoin('encrypted_folders as f', 'f.id', 'k.folder_id')
      .select(['k.folder_id', 'k.user_id'])
      .where('k.tenant_id', 'in', ids)
      .whereRef('k.version', '=', 'f.key_version');
    return this.db.async.read(function* (t) {
      return { roots: yield* t.all(roots), members: yield* t.all(members) };
    });
  }
}
