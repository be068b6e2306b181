/** One line under a metered storage's name: today's requests against its budget and the monthly estimate. */
import { useEffect, useState } from 'react';
import type { StorageMeter } from '../api/types';
import { useI18n } from '../i18n';
import * as admin from './admin-api';

export function MeterLine({ storageId }: { storageId: number }) {
  const { t } = useI18n();
  const [m, setM] = useState<StorageMeter | null>(null);
  useEffect(() => {
    admin.storageMeter(storageId).then(setM, () => setM(null));
  }, [storageId]);
  if (!m) return null;
  const used = m.budget_per_day > 0 ? t('meter.used_of', { n: m.used_today, budget: m.budget_per_day }) : t('meter.used', { n: m.used_today });
  return (
    <div className="muted" data-testid="storage-meter">
      {used} · {t('meter.estimate', { cost: m.estimated_monthly_cost.toFixed(2) })}
      {m.exhausted && <> <span className="pill">{t('meter.exhausted')}</span></>}
    </div>
  );
}
