/**
 * A tenant's quotas (docs/tenants.md, "Step 4: quotas"): what the operator set (`bytes`, `files`, `people`,
 * `links`; 0 or absent is no limit), read from the tenant directory (in memory, reloaded on every change and
 * on the other instances' notice, as a suspension is), against what the tenant uses: its live files and their
 * bytes from the catalogue (`TenantUsage`: one aggregate, kept current by the write gate), its people and its
 * live links. A write past a quota is refused `quota_exceeded` with `details.scope: "tenant"`, the quota's
 * `kind`, its limit (`quota`) and what is `used`, as the person's quota says `quota` and `used`.
 * Built in multi-tenant mode only: single-tenant mode checks nothing more than before.
 */
import type { QuotaLine, TenantQuotaUsage } from '../contract';
import type { TenantScope } from '../db';
import { AppError } from '../errors';
import type { UsersRepo } from './users.repo';

const QUOTA_KINDS = ['bytes', 'files', 'people', 'links'] as const;
export type QuotaKind = (typeof QUOTA_KINDS)[number];

/** What a tenant uses of each quota. */
export type TenantUse = Record<QuotaKind, number>;

export interface QuotaCounts {
  /** The tenant's live files and bytes (with the bytes of writes in flight). */
  storage(t: TenantScope): Promise<{ bytes: number; files: number }>;
  /** The tenant's live links and file requests. */
  links(t: TenantScope): Promise<number>;
}

/** `quota_exceeded` for a tenant's quota: `used` is what it held before the refused write. */
export const tenantOverQuota = (kind: QuotaKind, quota: number, used: number): AppError =>
  new AppError('quota_exceeded', { quota, used }, { code: 'QUOTA_EXCEEDED', scope: 'tenant', kind, quota, used });

const UNBOUNDED = { free: Number.POSITIVE_INFINITY, over: () => new AppError('quota_exceeded') };

export class TenantQuotas {
  constructor(
    /** The operator's quotas of a tenant (the directory's copy); undefined for a tenant it does not know. */
    private quotasOf: (t: TenantScope) => Readonly<Record<string, number>> | undefined,
    private users: Pick<UsersRepo, 'count'>,
    private counts: QuotaCounts,
  ) {}

  /** The tenant's limit of `kind`, or null when it has none (0 or absent). */
  limit(t: TenantScope, kind: QuotaKind): number | null {
    const v = this.quotasOf(t)?.[kind];
    return typeof v === 'number' && v > 0 ? v : null;
  }

  /** The tenant's egress share of the public uplink in percent (1–100), or null: no share set. */
  egressShare(t: TenantScope): number | null {
    const v = this.quotasOf(t)?.egress_share;
    return typeof v === 'number' && v > 0 && v < 100 ? v : null;
  }

  /** What the tenant uses of each quota, counted now (for the statuses, not for every write). */
  async used(t: TenantScope): Promise<TenantUse> {
    const storage = await this.counts.storage(t);
    return { bytes: storage.bytes, files: storage.files, people: await this.users.count(t), links: await this.counts.links(t) };
  }

  /** Every quota of the tenant with what it uses, and its egress share (the tenant admin's status). */
  async usage(t: TenantScope): Promise<TenantQuotaUsage> {
    const used = await this.used(t);
    const line = (k: QuotaKind): QuotaLine => ({ limit: this.limit(t, k), used: used[k] });
    return { bytes: line('bytes'), files: line('files'), people: line('people'), links: line('links'), egress_share: this.egressShare(t) };
  }

  /**
   * Refuses a write that adds `bytes` and `files` to the tenant's over its `bytes` or `files` quota. Returns
   * the bytes still free after it (`free`: Infinity without a bytes quota), which bounds a body of unknown
   * length, and the refusal such a body gets (`over`). Asks the catalogue nothing for a tenant without either quota.
   */
  async room(t: TenantScope, bytes: number, files: number): Promise<{ free: number; over: () => AppError }> {
    const maxBytes = this.limit(t, 'bytes');
    const maxFiles = this.limit(t, 'files');
    if (maxBytes === null && maxFiles === null) return UNBOUNDED;
    const use = await this.counts.storage(t);
    if (maxFiles !== null && files > 0 && use.files + files > maxFiles) throw tenantOverQuota('files', maxFiles, use.files);
    if (maxBytes === null) return UNBOUNDED;
    if (bytes > 0 && use.bytes + bytes > maxBytes) throw tenantOverQuota('bytes', maxBytes, use.bytes);
    return { free: Math.max(0, maxBytes - use.bytes - Math.max(0, bytes)), over: () => tenantOverQuota('bytes', maxBytes, use.bytes) };
  }
}
