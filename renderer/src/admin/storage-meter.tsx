/**
 * Under a metered storage's name: today's requests against its budget, the
 * monthly estimate, and the daily budget (0 = unlimited) with its own Save.
 */
import { useEffect, useState, type FormEvent } from 'react';
import type { StorageMeter } from '../api/types';
import { useI18n } from '../i18n';
import { useToast } from '../ui/toast';
import * as admin from './admin-api';

export function MeterLine({ storageId }: { storageId: number }) {
  const { t } = useI18n();
  const toast = useToast();
  const [m, setM] = useState<StorageMeter | null>(null);
  const [budget, setBudget] = useState('');
  const show = (v: StorageMeter) => {
    setM(v);
    setBudget(String(v.budget_per_day));
  };
  useEffect(() => {
    admin.storageMeter(storageId).then(show, () => setM(null));
  }, [storageId]);
  if (!m) return null;
  const save = async (e: FormEvent) => {
    e.preventDefault();
    try {
      show(await admin.setStorageBudget(storageId, Number(budget)));
    } catch (err) {
      toast.error(err);
    }
  };
  const used = m.budget_per_day > 0 ? t('meter.used_of', { n: m.used_today, budget: m.budget_per_day }) : t('meter.used', { n: m.used_today });
  return (
    <form className="muted" data-testid="storage-meter" onSubmit={(e) => void save(e)}>
      {used} · {t('meter.estimate', { cost: m.estimated_monthly_cost.toFixed(m.estimated_monthly_cost < 1 ? 4 : 2) })}
      {m.exhausted && (
        <>
          {' '}
          <span className="pill">{t('meter.exhausted')}</span>
        </>
      )}{' '}
      <label>
        {t('meter.budget')}{' '}
        <input type="number" min={0} step={1} className="small" style={{ width: '8em' }} value={budget} onChange={(e) => setBudget(e.target.value)} />
      </label>{' '}
      <button type="submit" className="small">
        {t('common.save')}
      </button>
    </form>
  );
}
