/** API keys, sessions, custom roles and permissions (docs/auth.md). */
import type { Role } from './common';

/** A key verb: what a request signed with the key may do at all. */
export type KeyVerb = 'files:read' | 'files:write' | 'shares:write' | 'ai.use' | 'admin';

/** An API key as its owner (or an admin) sees it; the secret is never shown again. */
export interface ApiKeyView {
  id: number;
  user_id: number;
  name: string;
  /** `key`: made on the keys page or by pairing a phone; `desktop`: signs a paired desktop in (no verbs). */
  kind: 'key' | 'desktop';
  verbs: KeyVerb[];
  /** The only folder the key reaches (`/<storage>/<path>`), or null for all its owner reaches. */
  root: string | null;
  machine_id: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  last_used_ip: string | null;
  revoked_at: string | null;
  state: 'active' | 'expired' | 'revoked';
}

/** The key a request was signed with, as `GET /api/auth/me` names it. */
export type KeyIdentity = Pick<ApiKeyView, 'id' | 'name' | 'verbs' | 'root' | 'expires_at'>;

/** `POST /api/auth/keys` and phone pairing: the key and its token, shown this once. */
export interface ApiKeyCreated {
  key: ApiKeyView;
  /** `fdk_<id>_<secret>`: send as `Authorization: Bearer <token>` (or as the password of a WebDAV, SFTP or FTP sign-in). */
  token: string;
  /** The same key for S3 clients (AWS Signature V4). */
  s3: { access_key_id: string; secret_access_key: string };
}

/** A signed-in browser or desktop. */
export interface SessionView {
  id: string;
  /** `login`, `oidc` or `desktop`. */
  kind: string;
  ip: string | null;
  ua: string | null;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  /** The session this request came with. */
  current: boolean;
}

/** A custom role: permission settings over a person's built-in role. */
export interface RoleView {
  id: number;
  name: string;
  permissions: Record<string, boolean>;
  members: number;
  created_at: string;
  updated_at: string;
}

/** `GET /api/admin/permissions`: every permission id, key verb and the built-in role matrix. */
export interface PermissionCatalogue {
  permissions: Array<{ id: string; description: string }>;
  verbs: Array<{ id: KeyVerb; description: string }>;
  matrix: Record<Exclude<Role, 'admin'>, Record<string, boolean>>;
}

/** `GET /api/admin/groups`: groups with their members. */
export interface GroupView {
  name: string;
  members: Array<{ id: number; email: string; username: string }>;
}
