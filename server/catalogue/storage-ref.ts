/** The scope of a storage's child rows (docs/tenants.md, principle 2: a child carries its storage's tenant). */
import type { TenantScope } from '../db';
import { AppError } from '../errors';

/**
 * A storage as its children's repositories take it: its id and its tenant. A `StorageRow` is one, so a
 * caller holding the row passes it; one holding an id takes the row from `StoragesRepo.ofAnyTenant` (a map
 * lookup, no query).
 */
export interface StorageRef extends TenantScope {
  id: number;
}

/**
 * The tenant of storage `id`'s changes and child rows: its row's, found by id whatever its tenant (system
 * work knows a storage by id only). A storage that is gone → `not_found`.
 */
export function storageTenant(storages: { ofAnyTenant(id: number): TenantScope | undefined }, id: number): TenantScope {
  const s = storages.ofAnyTenant(id);
  if (!s) throw new AppError('not_found', { storage_id: id });
  return s;
}
