import type { Share } from '../api/types';

/** A link's state from its own row: revoked wins, then expiry by date or by a spent download cap. */
export function linkStatus(s: Share, now = Date.now()): 'active' | 'revoked' | 'expired' {
  if (s.revoked_at) return 'revoked';
  if (s.expires_at && Date.parse(s.expires_at) <= now) return 'expired';
  if (s.max_downloads && (s.downloads ?? 0) >= s.max_downloads) return 'expired';
  return 'active';
}
