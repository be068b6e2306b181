/**
 * The root guard across tenants (docs/tenants.md, "Every door"): a local storage's root may be neither at,
 * inside nor above the root of a local storage of another tenant, so no tenant reaches another's files
 * through a storage of its own. Within one tenant nothing changes (single-tenant mode has no other tenant).
 * Paths are compared resolved, not through symlinks (a link pointing into another tenant's root is the
 * driver's to refuse: it never follows one out of its root).
 */
import { resolve, sep } from 'node:path';
import type { TenantScope } from '../db';

/** What the guard reads of a storage row. */
export interface RootedStorage {
  id: number;
  tenant_id: number;
  driver: string;
  config: string;
}

const localRoot = (driver: string, config: unknown): string | null => {
  const path = driver === 'local' ? (config as { path?: unknown } | null)?.path : undefined;
  return typeof path === 'string' && path !== '' ? resolve(path) : null;
};

const within = (inner: string, outer: string): boolean => inner === outer || inner.startsWith(outer.endsWith(sep) ? outer : outer + sep);

/**
 * Why `config` (of a storage of tenant `s` with `driver`) may not be saved, or null: its root meets the root of
 * another tenant's local storage among `rows` (`exceptId`: the storage being changed).
 */
export function crossTenantRootIssue(s: TenantScope, driver: string, config: unknown, rows: Iterable<RootedStorage>, exceptId = -1): string | null {
  const root = localRoot(driver, config);
  if (!root) return null;
  for (const r of rows) {
    if (r.tenant_id === s.tenant_id || r.id === exceptId) continue;
    const other = localRoot(r.driver, JSON.parse(r.config));
    if (other && (within(root, other) || within(other, root))) return "overlaps another tenant's storage";
  }
  return null;
}
