/**
 * What an actor may do beyond storage access levels, in one place for every
 * door: routes ask `requirePermission`, the file service asks `can` for
 * `files:read` / `files:write`. A key may do what its verbs name and its
 * owner's permissions allow; `admin` needs an admin owner as well; a link
 * acts with its creator's permissions; system work may do everything.
 */
import { AppError } from '../errors';
import type { Actor } from './actor';
import type { Verb } from './keys';
import { decide } from './permissions';

/** Whether `a` may do `permission` (a permission id, or a key verb such as `admin`). */
export function can(a: Actor, permission: string): boolean {
  if (a.kind === 'system') return true;
  if (a.kind === 'key' && !a.key.verbs.includes(permission as Verb)) return false;
  if (permission === 'admin') return a.principal.role === 'admin';
  return decide(a.principal, permission);
}

/**
 * Throws 403 `permission_denied` naming the permission and where the refusal
 * came from (`key`: the key lacks the verb; `role`: the person lacks it).
 */
export function requirePermission(a: Actor, permission: string): void {
  if (can(a, permission)) return;
  const source = a.kind === 'key' && !a.key.verbs.includes(permission as Verb) ? 'key' : 'role';
  throw new AppError('permission_denied', { permission, source }, { permission, source });
}
