/**
 * Settings of the features that exist on this server: protection (trash,
 * versions, link life, antivirus), home folders, sign-up, single sign-on (OIDC), metrics, backups of Filedock and updates. A section whose route is not
 * there yet (404/501) says so instead of failing. External services (document
 * server, diagrams) get their section when that feature exists.
 */
import { useEffect, useState, type FormEvent } from 'react';
import type { UpdateStatus } from '../api/types';
import { formatDate } from '../lib/format';
import { useI18n } from '../i18n';
import { useToast } from '../ui/toast';
import * as admin from './admin-api';
import { BackupsSection } from './backups-section';
import { HomesSection } from './homes-section';
import { MetricsSection } from './metrics-section';
import { OidcSection } from './oidc-section';
import { SignupSection } from './signup-section';
import { Section, useSection } from './section';

export function SettingsTab() {
  return (
    <div className="settings">
      <Protection />
      <HomesSection />
      <SignupSection />
      <OidcSection />
      <MetricsSection />
      <BackupsSection />
      <Updates />
    </div>
  );
}

type Prot = Record<string, unknown> & { antivirus?: Record<string, unknown> };

function Protection() {
  const { t } = useI18n();
  const toast = useToast();
  const [p, error, missing, setP] = useSection<Prot>(admin.protection);
  const [f, setF] = useState<Record<string, string | boolean>>({});
  useEffect(() => {
    if (!p) return;
    const av = p.antivirus ?? {};
    setF({
      trash_retention_days: String(p.trash_retention_days ?? ''),
      // Unset (trim to 20 on snapshot, no sweep) stays unset unless the admin types a number.
      versions_keep_n: p.versions_keep_n_unset ? '' : String(p.versions_keep_n ?? ''),
      share_max_ttl_days: String(p.share_max_ttl_days ?? ''),
      av_enabled: av.scan_enabled === true,
      av_mode: String(av.scan_mode ?? 'binary'),
      av_clamd_addr: String(av.clamd_addr ?? ''),
      av_max_scan_mb: String(av.max_scan_mb ?? ''),
      av_save_scan_window_minutes: String(av.save_scan_window_minutes ?? ''),
    });
  }, [p]);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const body: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(f)) body[k] = typeof v === 'boolean' || k === 'av_mode' || k === 'av_clamd_addr' ? v : v === '' ? undefined : Number(v);
    try {
      setP(await admin.patchProtection(body));
      toast.info(t('settings.saved'));
    } catch (err) {
      toast.error(err);
    }
  };
  const av = p?.antivirus ?? {};
  const num = (k: string, label: string, min?: unknown, max?: unknown, placeholder?: string) => (
    <label>
      {label}
      <input
        type="number"
        min={min as number | undefined}
        max={max as number | undefined}
        placeholder={placeholder}
        value={String(f[k] ?? '')}
        onChange={(e) => setF({ ...f, [k]: e.target.value })}
      />
    </label>
  );
  return (
    <Section title={t('settings.protection')} missing={missing} error={error}>
      {p && (
        <form className="form two-col" onSubmit={submit}>
          {num('trash_retention_days', t('settings.trash_days'), 1, 3650)}
          {num('versions_keep_n', t('settings.versions_keep'), 0, 1000, '20')}
          {f.versions_keep_n === '' && <p className="hint full">{t('settings.versions_keep_default')}</p>}
          {num('share_max_ttl_days', t('settings.share_ttl'), 0, 3650)}
          {Number(p.shares_over_max_ttl) > 0 && <p className="hint full">{t('settings.over_ttl', { n: Number(p.shares_over_max_ttl) })}</p>}
          <h3 className="full">{t('settings.av')}</h3>
          <p className="muted full" data-testid="av-status">
            {!av.enabled
              ? t('settings.av_off')
              : av.reachable
                ? t('settings.av_on_ok')
                : t('settings.av_on_down', { reason: String(av.health ?? t('settings.av_unreachable')) })}
          </p>
          <label className="check">
            <input type="checkbox" checked={f.av_enabled === true} onChange={(e) => setF({ ...f, av_enabled: e.target.checked })} />
            {t('settings.av_enabled')}
          </label>
          <label>
            {t('settings.av_mode')}
            <select value={String(f.av_mode ?? 'binary')} onChange={(e) => setF({ ...f, av_mode: e.target.value })}>
              {((av.modes as string[] | undefined) ?? ['binary', 'daemon']).map((m) => (
                <option key={m} value={m}>
                  {m === 'binary' || m === 'daemon' ? t(`settings.av_mode.${m}`) : m}
                </option>
              ))}
            </select>
          </label>
          {f.av_mode === 'daemon' && (
            <label>
              {t('settings.av_addr')}
              <input value={String(f.av_clamd_addr ?? '')} onChange={(e) => setF({ ...f, av_clamd_addr: e.target.value })} />
            </label>
          )}
          {num('av_max_scan_mb', t('settings.av_max'), av.max_scan_mb_min ?? 1, av.max_scan_mb_max ?? 10240)}
          {num('av_save_scan_window_minutes', t('settings.av_window'), av.save_scan_window_min ?? 2, av.save_scan_window_max ?? 60)}
          <div className="actions full">
            <button type="submit" className="primary">
              {t('common.save')}
            </button>
          </div>
        </form>
      )}
    </Section>
  );
}

function Updates() {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [st, error, missing, setSt] = useSection<UpdateStatus>(admin.updateStatus);
  return (
    <Section title={t('settings.updates')} missing={missing} error={error}>
      {st && (
        <>
          <p>
            {t('settings.update_current', { version: st.current_version })} · {st.channel} · {st.policy}
          </p>
          <p className="muted">{t('settings.update_checked', { date: st.checked_at ? formatDate(st.checked_at, lang) : t('common.never') })}</p>
          {st.last_error && <p className="error">{st.last_error.message || st.last_error.reason}</p>}
          {st.latest && (
            <p>
              {t('settings.update_latest', { version: st.latest.version })}{' '}
              {st.latest.notes_url && (
                <a href={st.latest.notes_url} target="_blank" rel="noreferrer">
                  {st.latest.notes || st.latest.notes_url}
                </a>
              )}
            </p>
          )}
          {st.instructions && <pre className="code small">{st.instructions}</pre>}
          {st.apply_refusal && st.update_available && <p className="hint">{st.apply_refusal}</p>}
          {st.last_applied?.restart_required && <p className="hint">{t('settings.update_restart', { version: st.last_applied.to })}</p>}
          <div className="actions">
            <button type="button" onClick={() => admin.updateCheck().then(setSt, toast.error)}>
              {t('settings.update_check')}
            </button>
            {st.candidate && !st.apply_refusal && (
              <button type="button" className="primary" disabled={!!st.in_progress} onClick={() => admin.updateApply().then(setSt, toast.error)}>
                {t('settings.update_apply')} {st.candidate}
              </button>
            )}
          </div>
        </>
      )}
    </Section>
  );
}
