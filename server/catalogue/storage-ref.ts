/** The scope of a storage's child rows (docs/tenants.md, principle 2: a child carries its storage's tenant). */
import type { TenantScope } from '../db';
import { AppError } from '../errors';

/**
 * A storage as its children's repositories take it: its id and its tenant. A `StorageRow` is one, so a
 * caller holding the row passes it; one holding an id takes it from `storageOf` (a map lookup, no query).
 */
export interface StorageRef extends TenantScope {
  id: number;
}

/** A storage as the write gate names it in its events: its ref and its name. */
export type NamedStorageRef = StorageRef & { name: string };

/** No tenant has this id, so every statement scoped by it finds and changes nothing. */
const GONE = 0;

type Storages = { ofAnyTenant(id: number): NamedStorageRef | undefined };

/**
 * Storage `id` found whatever its tenant (system work knows a storage by id only). One that is gone (deleted
 * while a write or a sync was under way) answers tenant `GONE`: the late work's statements then touch
 * nothing, and its events reach nobody.
 */
export function storageOf(storages: Storages, id: number): NamedStorageRef {
  return storages.ofAnyTenant(id) ?? { id, tenant_id: GONE, name: String(id) };
}

/** The same, for a caller that must refuse a storage that is gone: `not_found`. */
export function storageTenant(storages: Storages, id: number): NamedStorageRef {
  const s = storageOf(storages, id);
  if (s.tenant_id === GONE) throw new AppError('not_found', { storage_id: id });
  return s;
}
