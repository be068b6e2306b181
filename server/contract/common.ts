import type { KeyIdentity } from './access';

/** The error envelope of every failed request (spec: Errors). */
export interface ApiErrorBody {
  error: string;
  message: string;
  details?: Record<string, unknown>;
  params?: Record<string, unknown>;
}

/** Effective permission on a storage, as listings report it in `perm`. */
export type Perm = 'viewer' | 'editor' | 'admin';

export type Role = 'admin' | 'user' | 'viewer';

/** A person as `GET /api/auth/me`, the login answer and the admin user routes show them. */
export interface UserView {
  id: number;
  email: string;
  username: string;
  role: Role;
  disabled: boolean;
  language: string | null;
  groups: string[];
  quota_bytes: number | null;
  /** The custom role over the built-in one, if any (`GET /api/admin/roles`). */
  custom_role_id: number | null;
  auth_driver: string;
  created_at: string;
  updated_at: string;
}

/** The signed-in person (`GET /api/auth/me`, `PATCH /api/auth/me`). */
export type Me = Pick<UserView, 'id' | 'email' | 'username' | 'role' | 'groups' | 'language'> & {
  /** Present when the request was signed with an API key: what the key may do (a paired phone shows its folder). */
  key?: KeyIdentity;
  /** The UI path of the person's home folder (where the files page opens), or null. */
  home?: string | null;
  /** Multi-tenant mode only: set for a platform operator (the web app shows Admin → Tenants). */
  platform_operator?: true;
};
