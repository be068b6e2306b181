/** The replication failure log: unresolved (or all) failed copies, Fix all, and Fix one per row. */
import { useEffect, useState } from 'react';
import type { ReplicaFailure } from '../../../server/contract';
import { useI18n } from '../i18n';
import { formatDate } from '../lib/format';
import { useToast } from '../ui/toast';
import * as admin from './admin-api';

/** `tick` re-reads the list (the tab polls while it is open); `onFixed` lets the status refresh at once. */
export function FailuresCard({ tick, onFixed }: { tick: number; onFixed: () => void }) {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [unresolved, setUnresolved] = useState(true);
  const [rows, setRows] = useState<ReplicaFailure[] | null>(null);
  const load = () => admin.replicaFailures(unresolved).then(setRows, toast.error);
  useEffect(() => void load(), [tick, unresolved]);
  const fixed = (n: number) => {
    toast.info(t('replica.fix_queued', { n }));
    onFixed();
    void load();
  };
  const fixAll = () => void admin.replicaFixAll().then((r) => fixed(r.queued), toast.error);
  const fixOne = (f: ReplicaFailure) => void admin.replicaFixOne(f.path, f.op).then((r) => fixed(r.queued), toast.error);
  return (
    <section className="card" aria-label={t('replica.failures')}>
      <h2>{t('replica.failures')}</h2>
      <div className="toolbar">
        <label className="check">
          <input type="checkbox" checked={unresolved} onChange={(e) => setUnresolved(e.target.checked)} />
          {t('replica.unresolved_only')}
        </label>
        <button type="button" className="primary" disabled={!rows?.some((f) => !f.resolved_at)} onClick={fixAll}>
          {t('replica.fix_all')}
        </button>
      </div>
      {rows?.length === 0 && (
        <p className="muted" data-testid="replica-no-failures">
          {t('replica.no_failures')}
        </p>
      )}
      {rows && rows.length > 0 && (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{t('replica.path')}</th>
                <th scope="col">{t('replica.op')}</th>
                <th scope="col">{t('replica.error')}</th>
                <th scope="col">{t('replica.attempts')}</th>
                <th scope="col">{t('replica.when')}</th>
                <th scope="col">
                  <span className="sr-only">{t('files.actions', { name: '' })}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((f) => (
                <tr key={f.id} data-testid="replica-failure">
                  <td>
                    <code>{f.path}</code>
                    {f.to && (
                      <>
                        {' '}
                        → <code>{f.to}</code>
                      </>
                    )}
                  </td>
                  <td>{f.op}</td>
                  <td>
                    <span className="pill">{f.code}</span> {f.message}
                  </td>
                  <td>{f.attempts}</td>
                  <td>{f.resolved_at ? t('replica.resolved_at', { when: formatDate(f.resolved_at, lang) }) : formatDate(f.updated_at, lang)}</td>
                  <td>
                    {!f.resolved_at && (
                      <button type="button" className="small" aria-label={t('replica.fix_one_of', { path: f.path })} onClick={() => fixOne(f)}>
                        {t('replica.fix_one')}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
