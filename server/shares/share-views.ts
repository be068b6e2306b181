/**
 * A share's public state and its owner's view of it: pure functions of the row and of what was read beside
 * it (its creator, its storage), so a request reads the creator once and passes it on.
 */
import type { Principal } from '../auth';
import type { StorageRow } from '../catalogue';
import type { DropSettings, ShareView } from '../contract';
import type { ShareRow } from './shares.repo';

export const DROP_DEFAULTS: DropSettings = { max_files: 20, max_file_size_mb: 500, allowed_ext: [], ask_name: true };

export function dropSettingsOf(s: ShareRow): DropSettings {
  return { ...DROP_DEFAULTS, ...(s.drop_settings ? (JSON.parse(s.drop_settings) as Partial<DropSettings>) : {}) };
}

/**
 * Public state of a row now: expired (clock or revoke), revoked (`owner` null: its creator deleted or disabled;
 * its storage gone or disabled), suspended, capped, else active.
 */
export function shareState(s: ShareRow, owner: Principal | null, storage: StorageRow | undefined): ShareView['state'] {
  if (s.revoked_at || (s.expires_at !== null && Date.parse(s.expires_at) <= Date.now())) return 'expired';
  if (!owner) return 'revoked';
  if (!storage || !storage.enabled) return 'revoked';
  if (s.suspended_at) return 'suspended';
  if ((s.kind === 'link' || s.kind === 'app') && s.max_downloads !== null && s.downloads >= s.max_downloads) return 'capped';
  if (s.kind === 'drop' && s.max_uploads !== null && s.uploads >= s.max_uploads) return 'capped';
  return 'active';
}

/** The owner's view of a share. `submissions`: a file request's uses (visits that sent files). */
export function shareView(s: ShareRow, at: { path: string; url: string; state: ShareView['state']; submissions: number }): ShareView {
  return {
    id: s.id,
    kind: s.kind,
    path: at.path,
    token: s.token,
    url: at.url,
    ttl: s.ttl,
    expires_at: s.expires_at,
    expiry_clamped: !!s.expiry_clamped,
    max_downloads: s.max_downloads,
    downloads: s.downloads,
    max_uploads: s.max_uploads,
    uploads: s.uploads,
    requires_pin: !!s.pin_hash,
    comment: s.comment,
    drop_settings: s.kind === 'drop' ? dropSettingsOf(s) : null,
    created_at: s.created_at,
    revoked_at: s.revoked_at,
    suspended_at: s.suspended_at,
    suspended_reason: s.suspended_reason,
    state: at.state,
    ...(s.kind === 'drop' && { submissions: at.submissions }),
    ...(s.kind === 'app' && { plugin_name: s.plugin_name ?? '', page_id: s.page_id ?? '', title: s.title }),
  };
}
