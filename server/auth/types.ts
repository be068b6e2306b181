export type Role = 'admin' | 'user' | 'viewer';
export const ROLES: readonly Role[] = ['admin', 'user', 'viewer'];

/** The signed-in caller as every domain module sees it. */
export interface Principal {
  id: number;
  email: string;
  username: string;
  role: Role;
  groups: string[];
  language: string | null;
  sessionId: string;
}

/** A user as the admin API presents it. */
export interface UserView {
  id: number;
  email: string;
  username: string;
  role: Role;
  disabled: boolean;
  language: string | null;
  groups: string[];
  quota_bytes: number | null;
  auth_driver: string;
  created_at: string;
  updated_at: string;
}
