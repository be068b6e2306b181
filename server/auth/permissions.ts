/**
 * Permissions: what a person may do beyond storage access levels, decided in
 * one place in the spec's order (Authentication 7):
 *   1. an admin may do everything;
 *   2. the person's own exception (allow or deny), when one is set;
 *   3. their custom role's setting, when it names the permission;
 *   4. their built-in role's default (the matrix below);
 *   5. for an app permission (`app.<app>.<id>`) the app's declared default
 *      (`viewer`, `user` or `admin`: the lowest built-in role that has it).
 * Unknown permissions are denied.
 */
import type { Role } from './types';

/** Every permission id with what it allows (docs/auth.md lists them). */
export const PERMISSIONS = {
  'files:read': 'browse, search, preview and download files',
  'files:write': 'upload, create, rename, move, copy and delete files',
  'shares:write': 'create and revoke share links and file requests',
  'ai.assistant': 'use the AI assistant in the web UI',
  'ai.use': 'reach the agent API (MCP) with an API key',
} as const;

export type Permission = keyof typeof PERMISSIONS;

/** The built-in roles' defaults (admin has everything). */
export const ROLE_MATRIX: Record<Exclude<Role, 'admin'>, Record<Permission, boolean>> = {
  user: { 'files:read': true, 'files:write': true, 'shares:write': true, 'ai.assistant': true, 'ai.use': true },
  viewer: { 'files:read': true, 'files:write': false, 'shares:write': false, 'ai.assistant': true, 'ai.use': true },
};

const RANK: Record<Role, number> = { viewer: 1, user: 2, admin: 3 };

/** What the decision needs to know about a person. */
export interface PermissionSubject {
  role: Role;
  /** Settings of their custom role (only the permissions it names). */
  customRole?: Record<string, boolean> | null;
  /** Their own exceptions. */
  exceptions?: Record<string, boolean> | null;
}

/** Whether `p` is an app permission (`app.<app>.<id>`). */
export const isAppPermission = (p: string): boolean => /^app\.[a-z0-9][a-z0-9._-]*\.[a-z0-9][a-z0-9._-]*$/i.test(p);

/** Whether `permission` is one the service knows (a built-in id or an app permission). */
export const isPermission = (p: string): boolean => p in PERMISSIONS || isAppPermission(p);

/**
 * Decides `permission` for `s` in the spec's order. `appDefault` is the
 * declaring app's default for an app permission (none: denied after step 4).
 */
export function decide(s: PermissionSubject, permission: string, appDefault?: Role): boolean {
  if (s.role === 'admin') return true;
  const own = s.exceptions?.[permission];
  if (own !== undefined) return own;
  const custom = s.customRole?.[permission];
  if (custom !== undefined) return custom;
  const builtIn = (ROLE_MATRIX[s.role] as Record<string, boolean>)[permission];
  if (builtIn !== undefined) return builtIn;
  return appDefault !== undefined && isAppPermission(permission) && RANK[s.role] >= RANK[appDefault];
}
