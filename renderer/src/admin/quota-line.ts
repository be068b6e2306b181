/** One quota's line as Admin → Status and Admin → Tenants write it: "Storage: 1.2 GB of 5 GB", or without a limit "Storage: 1.2 GB". */
import type { Translate } from '../i18n';
import { formatBytes } from '../lib/format';

export const QUOTA_KINDS = ['bytes', 'files', 'people', 'links'] as const;
export type QuotaKind = (typeof QUOTA_KINDS)[number];

export function quotaLine(t: Translate, kind: QuotaKind, used: number, limit: number | null | undefined): string {
  const shown = (n: number) => (kind === 'bytes' ? formatBytes(n) : String(n));
  const what = t(`status.quota_${kind}`);
  return limit !== null && limit !== undefined
    ? t('status.quota_of', { what, used: shown(used), limit: shown(limit) })
    : t('status.quota_free', { what, used: shown(used) });
}
