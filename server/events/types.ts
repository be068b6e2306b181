/**
 * Every event the service announces, with its payload. Names are the spec's
 * own strings. `actor` is the user who caused it (absent for system writes).
 */
/** Who caused an event, as events and audit rows record it (absent for anonymous and system work). */
export interface ActorRef {
  id: number;
  email: string;
  /** The API key the person acted with, if any. */
  key_id?: number;
}
export interface RequestMeta {
  ip?: string | null;
  ua?: string | null;
}
export interface NodeRef {
  storage_id: number;
  storage: string;
  path: string;
  name: string;
  size: number;
  type: 'file' | 'dir';
  id?: number;
}

export interface AuditPayload {
  actor?: ActorRef | null;
  request?: RequestMeta;
  resource?: string;
  meta?: Record<string, unknown>;
}

export interface EventMap {
  'file.uploaded': { node: NodeRef; actor?: ActorRef | null; meta?: Record<string, unknown> };
  'file.updated': { node: NodeRef; actor?: ActorRef | null; meta?: Record<string, unknown> };
  'file.infected': {
    event: 'file.infected';
    severity: 'warning';
    title: string;
    body: string;
    node: { storage_id: number; path: string; name: string; size: number };
    meta: { signature: string; quarantined: boolean; trash_path: string };
  };
  /** The uplink guard suspended a public link (distinct addresses per hour over the limit, or a download accelerator). */
  'share.suspended': {
    share_id: number;
    owner_id: number;
    token: string;
    path: string;
    reason: 'addresses' | 'accelerator';
    suspended_at: string;
    addresses?: number;
    ip?: string;
    ua?: string;
  };
  /** A local storage's volume is gone (unplugged, unmounted) or another volume sits at its mount point (catalogue/volumes.ts). */
  'storage.offline': { storage_id: number; name: string; path: string; reason: string };
  /** The storage is back: its volume returned, at the same path or (with `reattached_from`) mounted elsewhere. */
  'storage.online': { storage_id: number; name: string; path: string; reattached_from?: string };
  /** A different volume came back at a storage's mount point: not attached, nothing synced over it. */
  'storage.volume_mismatch': { storage_id: number; name: string; path: string; expected: string; found: string | null; reason: string };
  'drop.received': { share_id: number; owner_id: number; folder: string; files: string[]; uploader?: string };
  /** Realtime change of a folder's content (UI path of the folder). */
  'folder.changed': { storage_id: number; folder: string; kind: 'created' | 'updated' | 'deleted' | 'moved'; path: string; name: string };
  'op.changed': { op_id: string; owner_id: number | null };
  update_available: { version: string; severity: string; notes?: string; notes_url?: string; kind: string };
  update_applied: { from: string; to: string; restart_required: boolean };
  /**
   * A store offers a newer compatible version of an installed app (once per app version; docs/app-store.md, "Updates"):
   * `held` says why it was not installed by itself: `manual` (automatic updates off), `major`, `permissions` (those
   * in `permissions` are new) or `failed` (the automatic upgrade was refused: `error`).
   */
  'app_store.update_available': {
    /** The installed app's id, or a language pack's (`kind: 'language-pack'`). */
    app_id: string;
    kind?: 'language-pack';
    name: string;
    store: number;
    installed: string;
    version: string;
    held: 'manual' | 'major' | 'permissions' | 'failed';
    permissions?: string[];
    error?: string;
  };
  /**
   * A store's licence revocation list went unread for 30 days (once per unread stretch; docs/app-store.md,
   * "Licences online"): licences keep being verified offline, revocations the store made since are not known.
   */
  'app_store.licences_unchecked': { store: number; url: string; name: string | null; since: string | null; error: string };
  /** An admin removed every second factor of a person (who is told in the bell). */
  'user.mfa_reset': { user_id: number; by: string | null };
  audit: { action: string } & AuditPayload;
}

export type EventName = keyof EventMap;
