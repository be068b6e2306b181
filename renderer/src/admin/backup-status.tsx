/**
 * Admin → Status, "Backups": when the last backup was made and how old it is,
 * amber past the threshold the server gives (twice the schedule's interval,
 * 8 days unscheduled) and when there is none yet.
 */
import { useEffect, useState } from 'react';
import type { BackupsView } from '../../../server/contract';
import { formatBytes, formatDate, formatRelative } from '../lib/format';
import { useI18n } from '../i18n';
import * as admin from './admin-api';

const UNITS = [
  ['day', 86_400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
] as const;

/** "8 days", "2 hours", "30 minutes": the largest unit the span fills. */
function span(seconds: number, lang: string): string {
  const [unit, size] = UNITS.find(([, n]) => seconds >= n) ?? UNITS[3];
  return new Intl.NumberFormat(lang, { style: 'unit', unit, unitDisplay: 'long' }).format(Math.max(1, Math.round(seconds / size)));
}

/** Reloads with the status tab (`tick` changes every refresh). */
export function BackupStatus({ tick }: { tick: number }) {
  const { t, lang } = useI18n();
  const [v, setV] = useState<BackupsView | null>(null);
  useEffect(() => void admin.backups().then(setV, () => setV(null)), [tick]);
  if (!v) return null;
  const last = v.last;
  return (
    <section className="card" aria-label={t('status.backups')} data-testid="backup-status">
      <h2>{t('status.backups')}</h2>
      {last ? (
        <p className={v.stale ? 'rpo-warn' : undefined}>
          {t('status.backup_last', { when: formatDate(last.at, lang), ago: formatRelative(last.at, lang), size: formatBytes(last.bytes), where: last.where })}
          {v.stale && <> · {t('status.backup_stale', { limit: span(v.stale_after_s, lang) })}</>}
        </p>
      ) : (
        <p className="rpo-warn">{t('status.backup_none')}</p>
      )}
    </section>
  );
}
