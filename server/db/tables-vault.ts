/** Row types of the vault's tables (owner: vault; docs/vault.md, "Server"). */
import type { Generated } from 'kysely';
import type { TenantRow } from './tenant-tables';

/** vault: one person's vault (the KDF parameters are JSON; only SHA-256 of each `auth` proof is kept). */
export interface VaultsTable extends TenantRow {
  user_id: number;
  kdf: string;
  public_key: string;
  wrapped_private_key: string;
  recovery_wrapped_private_key: string;
  auth_hash: string;
  recovery_auth_hash: string;
  created_at: string;
  updated_at: string;
}

/** vault: the root of an encrypted subtree. */
export interface EncryptedFoldersTable extends TenantRow {
  id: Generated<number>;
  storage_id: number;
  rel: string;
  owner_id: number;
  key_version: number;
  created_at: string;
}

/** vault: a folder key version wrapped for one member. */
export interface EncryptedFolderKeysTable extends TenantRow {
  folder_id: number;
  user_id: number;
  version: number;
  wrapped_key: string;
}

/** vault: an encrypted thumbnail (base64 of an FDV1 file), keyed by its file's node. */
export interface EncryptedThumbsTable extends TenantRow {
  node_id: number;
  data: string;
  updated_at: string;
}
