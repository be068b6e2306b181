/** The audit log with its filters (user, action, date range). */
import { useEffect, useState, type FormEvent } from 'react';
import type { AuditEvent } from '../api/types';
import { useI18n } from '../i18n';
import { formatDate } from '../lib/format';
import { errorText } from '../ui/toast';
import * as admin from './admin-api';
import { auditWords, KNOWN_ACTIONS } from './admin-words';

export function AuditTab() {
  const { t, lang } = useI18n();
  const [f, setF] = useState({ user_id: '', action: '', from: '', to: '' });
  const [rows, setRows] = useState<AuditEvent[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = () => {
    const q: Record<string, string | number> = { limit: 200 };
    if (f.user_id) q.user_id = Number(f.user_id);
    if (f.action) q.action = f.action;
    if (f.from) q.from = new Date(f.from).toISOString();
    if (f.to) q.to = new Date(`${f.to}T23:59:59`).toISOString();
    admin.audit(q).then((r) => {
      setRows(r);
      setError(null);
    }, setError);
  };
  useEffect(load, []);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    load();
  };
  return (
    <div>
      <form className="filters inline-form" onSubmit={submit} aria-label={t('audit.filter')}>
        <label>
          {t('audit.user')}
          <input type="number" min={1} value={f.user_id} onChange={(e) => setF({ ...f, user_id: e.target.value })} />
        </label>
        <label>
          {t('audit.action')}
          <input list="audit-actions" value={f.action} onChange={(e) => setF({ ...f, action: e.target.value })} />
          <datalist id="audit-actions">
            {KNOWN_ACTIONS.map((a) => (
              <option key={a} value={a} label={auditWords(a, t)} />
            ))}
          </datalist>
        </label>
        <label>
          {t('audit.from')}
          <input type="date" value={f.from} onChange={(e) => setF({ ...f, from: e.target.value })} />
        </label>
        <label>
          {t('audit.to')}
          <input type="date" value={f.to} onChange={(e) => setF({ ...f, to: e.target.value })} />
        </label>
        <button type="submit" className="primary">
          {t('audit.filter')}
        </button>
      </form>
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      {rows?.length === 0 && <p className="empty">{t('audit.empty')}</p>}
      {rows && rows.length > 0 && (
        <div className="table-wrap">
          <table className="table" data-testid="audit">
            <thead>
              <tr>
                <th scope="col">{t('audit.time')}</th>
                <th scope="col">{t('users.email')}</th>
                <th scope="col">{t('audit.action')}</th>
                <th scope="col">{t('audit.resource')}</th>
                <th scope="col">{t('audit.ip')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr key={e.id}>
                  <td>{formatDate(e.ts, lang)}</td>
                  <td>{e.user_email ?? (e.user_id === null ? '—' : `#${e.user_id}`)}</td>
                  <td title={e.action}>{auditWords(e.action, t)}</td>
                  <td className="wrap">{e.resource}</td>
                  <td>{e.ip}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
