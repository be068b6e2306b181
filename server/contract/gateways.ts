/** The protocol gateways (WebDAV, SFTP, FTPS, S3): `GET /api/admin/gateways`. */

export type GatewayProtocol = 'webdav' | 'sftp' | 'ftp' | 's3' | 'nfs';

export interface GatewayListenerView {
  protocol: GatewayProtocol;
  enabled: boolean;
  /** Where it listens (`host:port`, or the path on the main listener for WebDAV), when it does. */
  listen: string | null;
  /** The address to give clients (`davs://…`, `sftp://…`, `ftps://…`, `http://…` for S3), when known. */
  url: string | null;
  /** Why it is not listening although enabled (port taken, bad certificate…). */
  error: string | null;
  /** SFTP only: the host key's `SHA256:…` fingerprint, for clients to compare on first connection. */
  fingerprint?: string;
}

/** A client signed in to a gateway (for WebDAV and S3, which have no connection: active in the last 5 minutes). */
export interface GatewaySessionView {
  protocol: GatewayProtocol;
  /** The account (and the key, when one was used). */
  user: string;
  ip: string;
  since: string;
  last_active: string;
}

export interface GatewaysStatus {
  gateways: GatewayListenerView[];
  sessions: GatewaySessionView[];
}

/** `GET /api/gateways` (any signed-in person): where each gateway answers, for the connection instructions. */
export interface GatewayAddresses {
  gateways: Array<Pick<GatewayListenerView, 'protocol' | 'enabled' | 'url'>>;
}

/** `GET/POST /api/admin/gateways/nfs/exports`, `PATCH/DELETE …/:id`: a storage or folder served over NFSv3. */
export interface NfsExportView {
  id: number;
  /** UI path of the exported storage or folder (`/<storage>/<folder>`). */
  path: string;
  /**
   * The path a client mounts it by: `path`, under `/t/<slug>` for a tenant other than tenant 1 in multi-tenant
   * mode (docs/gateways-nfs.md, "Tenants"). Read-only.
   */
  mount_path: string;
  /** Addresses and CIDR ranges, comma-separated. */
  clients: string;
  /** The account whose rights apply to every call (NFS has no sign-in). */
  user_id: number;
  /** One of that account's API keys, whose scope applies instead; null for the account itself. */
  key_id: number | null;
  read_only: boolean;
  created_at: string;
}

/** `GET/POST/DELETE /api/auth/ssh-keys`: an SSH public key that signs its account in to the SFTP gateway. */
export interface SshKeyView {
  id: number;
  name: string;
  /** `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`… */
  algo: string;
  /** `SHA256:…` as `ssh-keygen -lf` prints it. */
  fingerprint: string;
  created_at: string;
  last_used_at: string | null;
}
