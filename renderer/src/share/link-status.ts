import type { Share } from '../api/types';

/**
 * A link's state from its own row: revoked wins, then `used` (its download cap,
 * or a file request's file cap, is spent), then `expired` by date, then `suspended` (uplink guard). A capped link is dead either way; the
 * owner is told which limit ended it.
 */
export function linkStatus(s: Share, now = Date.now()): 'active' | 'revoked' | 'expired' | 'used' | 'suspended' {
  if (s.revoked_at) return 'revoked';
  if (s.max_downloads && (s.downloads ?? 0) >= s.max_downloads) return 'used';
  if (s.kind === 'drop' && s.max_uploads && (s.uploads ?? 0) >= s.max_uploads) return 'used';
  if (s.expires_at && Date.parse(s.expires_at) <= now) return 'expired';
  // Suspended by the uplink guard: alive otherwise, so the owner can re-enable it.
  if (s.suspended_at) return 'suspended';
  return 'active';
}
