export type InstallMode = 'binary' | 'docker' | 'desktop' | 'source';
export type UpdatePolicy = 'off' | 'manual' | 'patch' | 'minor';
export type MoveKind = 'patch' | 'minor' | 'major' | 'none';
export type AutoBlock = 'policy' | 'zero_major' | 'not_auto_ok' | 'migrations' | 'install_mode' | 'window' | 'busy';
export type InstallPhase = 'downloading' | 'verifying' | 'unpacking' | 'smoke_test' | 'snapshot' | 'swapping' | 'restarting';

export interface UpdateErrorInfo {
  /** A stable reason (`manifest_invalid`, `network`, `checksum_mismatch`, ...). */
  reason: string;
  message: string;
  at: string;
}

export interface ReleaseSummary {
  version: string;
  kind: MoveKind;
  date: string;
  severity: string;
  notes: string;
  notes_url: string;
  image: string;
  migrations: boolean;
  auto_ok: boolean;
}

/** `GET /api/admin/update`: the cached status (the server never fetches for it). */
export interface UpdateStatus {
  current_version: string;
  install_mode: InstallMode;
  channel: string;
  policy: UpdatePolicy;
  check_enabled: boolean;
  checked_at: string | null;
  last_error: UpdateErrorInfo | null;
  /** Newest published release above the running one (any part moved), or null. */
  latest: ReleaseSummary | null;
  update_available: boolean;
  /** Version a plain apply installs, or null. */
  candidate: string | null;
  /** Why apply would be refused right now (`container`, `not_self_replaceable`, ...), or null. */
  apply_refusal: string | null;
  auto: { target: string | null; blocked_by: AutoBlock[] };
  /** Upgrade instructions for a major release or a container install; null otherwise. */
  instructions: string | null;
  in_progress: InstallPhase | null;
  last_applied: { from: string; to: string; at: string; restart_required: boolean } | null;
}
