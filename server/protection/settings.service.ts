/**
 * The admin's protection page: `GET /api/admin/protection` (settings, the
 * share ceiling with the count of live links over it, and the antivirus
 * block in its two halves) and the partial PATCH. Every field is checked
 * before any is stored, so an out-of-range value changes nothing; a change
 * is audited as `admin.config_change` and applies at once (the scanner is
 * rebuilt per scan, the sweeps read the settings when they run).
 */
import type { Db, TenantScope } from '../db';
import type { ActorRef, EventBus, RequestMeta } from '../events';
import type { SettingKey, SettingsStore } from '../settings';
import { AppError } from '../errors';
import { AV_MODES, type Antivirus, type AvStatus } from './antivirus.service';
import { DEFAULT_KEEP } from './versions.service';
import { ShareCeilingRepo } from './share-ceiling.repo';

export const MAX_SCAN_MB = { min: 1, max: 10240 } as const;
export const SAVE_SCAN_WINDOW = { min: 2, max: 60 } as const;

export interface ProtectionView {
  trash_retention_days: number;
  /** The effective retention: DEFAULT_KEEP (20) while the setting is unset. */
  versions_keep_n: number;
  /** True while `versions_keep_n` was never set (or PATCHed to null): trim on snapshot only, no daily sweep. */
  versions_keep_n_unset: boolean;
  share_max_ttl_days: number;
  shares_over_max_ttl: number;
  antivirus: AvStatus & {
    scan_enabled: boolean;
    scan_mode: 'binary' | 'daemon';
    clamd_addr: string;
    database: string;
    modes: readonly string[];
    max_scan_mb: number;
    max_scan_mb_min: number;
    max_scan_mb_max: number;
    save_scan_window_minutes: number;
    save_scan_window_min: number;
    save_scan_window_max: number;
  };
}

/** PATCH field → settings key. */
const FIELDS: Record<string, SettingKey> = {
  trash_retention_days: 'trash_retention_days',
  share_max_ttl_days: 'share_max_ttl_days',
  versions_keep_n: 'versions_keep_n',
  av_enabled: 'av_enabled',
  av_mode: 'av_mode',
  av_clamd_addr: 'av_clamd_addr',
  av_max_scan_mb: 'av_max_scan_mb',
  av_save_scan_window_minutes: 'av_save_scan_window_minutes',
  av_database: 'av_database',
};
export const PATCH_FIELDS = Object.keys(FIELDS);

export class ProtectionSettings {
  private shares: ShareCeilingRepo;

  constructor(
    db: Db,
    private settings: SettingsStore,
    private av: Antivirus,
    private bus: EventBus,
  ) {
    this.shares = new ShareCeilingRepo(db);
  }

  /** The settings, with the links of `scope` (the admin's tenant) that outlive the share ceiling. */
  async view(scope: TenantScope): Promise<ProtectionView> {
    const s = this.settings;
    return {
      trash_retention_days: s.get('trash_retention_days'),
      versions_keep_n: s.get('versions_keep_n') ?? DEFAULT_KEEP,
      versions_keep_n_unset: s.get('versions_keep_n') === null,
      share_max_ttl_days: s.get('share_max_ttl_days'),
      shares_over_max_ttl: await this.sharesOverMaxTtl(scope),
      antivirus: {
        ...(await this.av.status()),
        scan_enabled: s.get('av_enabled'),
        scan_mode: s.get('av_mode'),
        clamd_addr: s.get('av_clamd_addr'),
        database: s.get('av_database'),
        modes: AV_MODES,
        max_scan_mb: s.get('av_max_scan_mb'),
        max_scan_mb_min: MAX_SCAN_MB.min,
        max_scan_mb_max: MAX_SCAN_MB.max,
        save_scan_window_minutes: s.get('av_save_scan_window_minutes'),
        save_scan_window_min: SAVE_SCAN_WINDOW.min,
        save_scan_window_max: SAVE_SCAN_WINDOW.max,
      },
    };
  }

  /**
   * Applies a partial update. Unknown fields and out-of-range values →
   * `validation_failed` naming the field, and nothing is stored. Returns the
   * fresh view (of `scope`, the admin's tenant).
   */
  async patch(scope: TenantScope, input: Record<string, unknown>, actor: ActorRef | null, request?: RequestMeta): Promise<ProtectionView> {
    const changes: Record<string, { from: unknown; to: unknown }> = {};
    for (const [field, value] of Object.entries(input)) {
      if (value === undefined) continue;
      const key = FIELDS[field];
      if (!key) throw new AppError('validation_failed', { field, reason: 'unknown field' }, { field, reason: 'unknown field' });
      changes[field] = { from: this.settings.get(key), to: this.settings.check(key, value) };
    }
    for (const [field, c] of Object.entries(changes)) {
      if (JSON.stringify(c.from) === JSON.stringify(c.to)) delete changes[field];
      else await this.settings.set(FIELDS[field], c.to as never);
    }
    if (Object.keys(changes).length)
      await this.bus.emit(scope, 'audit', { action: 'admin.config_change', actor, request, resource: 'protection', meta: { changes } });
    return this.view(scope);
  }

  /** The tenant's live links (not revoked, not expired) that outlive today's ceiling; 0 when there is no ceiling. */
  private async sharesOverMaxTtl(scope: TenantScope): Promise<number> {
    const days = this.settings.get('share_max_ttl_days');
    if (days === 0) return 0;
    return this.shares.countOutliving(scope, new Date(Date.now() + days * 86_400_000).toISOString());
  }
}
