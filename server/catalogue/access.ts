/**
 * Who may see and change which storage: the one place the effective level is
 * computed, for a whole set of storages at once. It is what listings report
 * as `perm`.
 *   - disabled storages are hidden from everyone;
 *   - admins see every enabled storage (level `admin`);
 *   - with `rbac_enabled`, only grants (per user or group) give access, the best one wins;
 *     a grant with a `path` (a home folder) counts only at that folder and inside it;
 *   - otherwise every signed-in user is an `editor`;
 *   - `viewer` role users and `read_only` storages never get more than `viewer`.
 */
import type { Principal } from '../auth';
import type { Perm } from '../contract';
import { isWithin } from '../lib/paths';
import type { Grant, StorageRow } from './storages.repo';

export type Level = Perm;
const RANK: Record<Level, number> = { viewer: 1, editor: 2, admin: 3 };

export const atLeast = (have: Level | null, want: Level): boolean => have !== null && RANK[have] >= RANK[want];

const mine = (p: Principal, g: Grant): boolean => (g.user_id !== null && g.user_id === p.id) || (g.group !== null && p.groups.includes(g.group));

/**
 * The principal's level on storage `s`: on the whole storage when `rel` is
 * undefined (folder grants do not count), else at the path `rel`.
 */
export function effectiveLevel(p: Principal, s: StorageRow, grants: readonly Grant[], rel?: string): Level | null {
  if (!s.enabled) return null;
  let level: Level | null;
  if (p.role === 'admin') level = 'admin';
  else if (s.rbac_enabled) {
    level = null;
    for (const g of grants) {
      if (!mine(p, g)) continue;
      if (g.path !== '' && (rel === undefined || !isWithin(rel, g.path))) continue;
      if (level === null || RANK[g.level] > RANK[level]) level = g.level;
    }
  } else level = 'editor';
  if (level === null) return null;
  if (p.role === 'viewer' || s.read_only) return 'viewer';
  return level;
}

/**
 * The folders the principal holds grants on in `s` when it has no level on
 * the whole storage (its home folder, say): the storage is then only passed
 * through on the way to them. Empty when it has none.
 */
export function grantedFolders(p: Principal, s: StorageRow, grants: readonly Grant[]): string[] {
  if (!s.enabled || p.role === 'admin' || !s.rbac_enabled) return [];
  const paths = [...new Set(grants.filter((g) => g.path !== '' && mine(p, g)).map((g) => g.path))].sort();
  // A folder inside another granted one adds nothing to pass through (an encrypted folder in a person's home).
  return paths.filter((f) => !paths.some((o) => o !== f && isWithin(f, o)));
}
