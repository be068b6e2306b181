/** The scope of a storage's child rows (docs/tenants.md, principle 2: a child carries its storage's tenant). */
import type { TenantScope } from '../db';

/**
 * A storage as its children's repositories take it: its id and its tenant. A `StorageRow` is one, so a
 * caller holding the row passes it; one holding an id takes the row from `StoragesRepo.ofAnyTenant` (a map
 * lookup, no query).
 */
export interface StorageRef extends TenantScope {
  id: number;
}
