/** The tenant of the rows protection keeps about a storage's files (docs/tenants.md, principle 2). */
import { storageTenant as ofStorage, type Catalogue } from '../catalogue';
import type { TenantScope } from '../db';

/**
 * The tenant trash items, versions and scan outcomes of storage `id` are written and found in: the storage
 * row's (a child carries its storage's tenant). A storage that is gone → `not_found`.
 */
export function storageTenant(cat: Pick<Catalogue, 'repo'>, id: number): TenantScope {
  return ofStorage(cat.repo, id);
}
