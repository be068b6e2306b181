import type { Role, UserView } from '../contract';

export type { Role, UserView };
export const ROLES: readonly Role[] = ['admin', 'user', 'viewer'];

/** The signed-in caller as every domain module sees it. */
export interface Principal {
  id: number;
  /** Their tenant (docs/tenants.md; 1 in single-tenant mode): a principal is the scope of what it does. */
  tenant_id: number;
  email: string;
  username: string;
  role: Role;
  groups: string[];
  language: string | null;
  sessionId: string;
  /** Set for a platform operator (docs/tenants.md, "Who is who"): tenants, updates and the installation's settings are theirs. */
  platform_operator?: true;
  /** Their custom role's permission settings, when they have one (auth/permissions). */
  customRole?: Record<string, boolean> | null;
  /** Their own permission exceptions. */
  exceptions?: Record<string, boolean> | null;
}
