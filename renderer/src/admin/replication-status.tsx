/**
 * Replication at a glance: the live recovery point (RPO; amber above the
 * server's `rpo_warn_s`), queued copies and unresolved failures, the last
 * content audit and restore drill with "Run drill now", the last report with
 * "Run now", and the settings (report and drill schedules, default mode).
 */
import { useEffect, useState, type FormEvent, type MouseEvent } from 'react';
import { ApiError } from '../api/client';
import type { ReplicaAudit, ReplicaDrill, ReplicaMode, ReplicaReport, ReplicaSettings, ReplicaStatus } from '../../../server/contract';
import { useI18n, type Translate } from '../i18n';
import { formatDate } from '../lib/format';
import { errorText, useToast } from '../ui/toast';
import * as admin from './admin-api';

/** "Up to date" or how far behind, in the largest whole unit. */
export function rpoText(s: number, t: Translate): string {
  if (s <= 0) return t('replica.rpo_ok');
  if (s < 60) return t('replica.rpo_s', { n: s });
  if (s < 7200) return t('replica.rpo_min', { n: Math.floor(s / 60) });
  return t('replica.rpo_h', { n: Math.floor(s / 3600) });
}

/** Brings the targets card into view and focuses its first control ("Add target"). */
function goToTargets(e: MouseEvent) {
  e.preventDefault();
  const card = document.getElementById('replica-targets');
  card?.scrollIntoView({ block: 'start' });
  card?.querySelector<HTMLElement>('button')?.focus({ preventScroll: true });
}

/**
 * No storage backed up to an enabled target: a neutral "No backups set up" (never a green "Up to date")
 * with the way to set one up: add a target, or link a storage when targets exist.
 */
function NoBackups({ hasTargets }: { hasTargets: boolean }) {
  const { t } = useI18n();
  return (
    <div className="replica-none" data-testid="replica-none">
      <p>
        <strong>{t('replica.none')}</strong>
      </p>
      <p className="hint">{t('replica.none_hint')}</p>
      <p>
        <a href="#replica-targets" onClick={goToTargets}>
          {t(hasTargets ? 'replica.none_link' : 'replica.none_add')}
        </a>
      </p>
    </div>
  );
}

export function StatusCard({ status, tick, hasTargets }: { status: ReplicaStatus | null; tick: number; hasTargets: boolean }) {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [audit, setAudit] = useState<ReplicaAudit | null>(null);
  const [drill, setDrill] = useState<ReplicaDrill | null>(null);
  useEffect(() => {
    admin.replicaAudit().then(setAudit, () => undefined);
    admin.replicaDrill().then(setDrill, () => undefined);
  }, [tick]);
  const runDrill = () => void admin.runReplicaDrill().then(() => toast.info(t('replica.drill_queued')), toast.error);
  return (
    <section className="card" aria-label={t('replica.status')}>
      <h2>{t('replica.status')}</h2>
      {status && !status.linked && <NoBackups hasTargets={hasTargets} />}
      {status?.linked && (
        <dl className="facts">
          <dt>{t('replica.rpo')}</dt>
          <dd
            data-testid="replica-rpo"
            className={status.rpo_warn ? 'rpo-warn' : status.rpo_s === 0 ? 'ok' : undefined}
            title={t('replica.rpo_hint', { n: Math.round(status.rpo_warn_s / 60) })}
          >
            {rpoText(status.rpo_s, t)}
          </dd>
          <dt>{t('replica.queued')}</dt>
          <dd>{status.queued_copies}</dd>
          <dt>{t('replica.unresolved')}</dt>
          <dd data-testid="replica-unresolved">{status.unresolved}</dd>
        </dl>
      )}
      <h3>{t('replica.audit')}</h3>
      {audit ? (
        <p data-testid="replica-audit">
          {t('replica.audit_line', {
            when: formatDate(audit.ran_at, lang),
            kind: t(`replica.audit_kind.${audit.kind}`),
            checked: audit.checked,
            missing: audit.missing,
            mismatched: audit.mismatched,
            unreadable: audit.unreadable,
          })}
        </p>
      ) : (
        <p className="muted">{t('replica.audit_none')}</p>
      )}
      <h3>{t('replica.drill')}</h3>
      {drill ? (
        <p data-testid="replica-drill" className={drill.ok ? 'ok' : 'error'}>
          {drill.folder === null
            ? t('replica.drill_nothing', { when: formatDate(drill.ran_at, lang) })
            : t(drill.ok ? 'replica.drill_ok' : 'replica.drill_bad', {
                when: formatDate(drill.ran_at, lang),
                folder: drill.folder,
                files: drill.files,
                identical: drill.identical,
                differing: drill.differing.length,
                missing: drill.missing_on_replica.length,
              })}
        </p>
      ) : (
        <p className="muted">{t('replica.drill_none')}</p>
      )}
      <button type="button" onClick={runDrill} disabled={!status?.linked} aria-describedby={status && !status.linked ? 'replica-drill-off' : undefined}>
        {t('replica.drill_run')}
      </button>
      {status && !status.linked && (
        <p className="hint" id="replica-drill-off">
          {t('replica.drill_off')}
        </p>
      )}
    </section>
  );
}

export function ReportCard() {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [report, setReport] = useState<ReplicaReport | null | undefined>(undefined);
  useEffect(() => void admin.replicaReport().then(setReport, toast.error), []);
  const run = () => void admin.runReplicaReport().then(setReport, toast.error);
  return (
    <section className="card" aria-label={t('replica.report')}>
      <h2>{t('replica.report')}</h2>
      {report === null && (
        <p className="muted" data-testid="replica-report">
          {t('replica.report_none')}
        </p>
      )}
      {report && (
        <div data-testid="replica-report">
          <p>{t('replica.report_line', { when: formatDate(report.ran_at, lang), unresolved: report.unresolved, repaired: report.repaired_24h })}</p>
          <p className={report.rpo_warn ? 'rpo-warn' : undefined}>
            {t('replica.rpo')}: {rpoText(report.rpo_s, t)}
          </p>
          <ul>
            {report.targets.map((x) => (
              <li key={x.id}>
                {x.name} ({x.driver}, {t(`replica.target_mode.${x.mode}`)}): {x.storages.join(', ') || '—'}
              </li>
            ))}
          </ul>
        </div>
      )}
      <button type="button" onClick={run}>
        {t('replica.report_run')}
      </button>
    </section>
  );
}

export function SettingsCard({ modes }: { modes: ReplicaMode[] }) {
  const { t } = useI18n();
  const toast = useToast();
  const [v, setV] = useState<ReplicaSettings | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => void admin.replicaSettings().then(setV, setError), []);
  const field = error instanceof ApiError ? String(error.details.field ?? '') : '';
  const at = (f: string) =>
    field === f ? (
      <small className="error" role="alert">
        {errorText(error, t)}
      </small>
    ) : null;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      setV(await admin.patchReplicaSettings(v!));
      toast.info(t('settings.saved'));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section className="card" aria-label={t('replica.settings')}>
      <h2>{t('replica.settings')}</h2>
      {error && !field ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      {v && (
        <form className="form" onSubmit={submit}>
          <label className="check">
            <input type="checkbox" checked={v.report_enabled} onChange={(e) => setV({ ...v, report_enabled: e.target.checked })} />
            {t('replica.report_enabled')}
          </label>
          <label>
            {t('replica.report_cron')}
            <input value={v.report_cron} aria-invalid={field === 'report_cron'} onChange={(e) => setV({ ...v, report_cron: e.target.value })} />
            {at('report_cron')}
          </label>
          <label>
            {t('replica.drill_cron')}
            <input value={v.drill_cron} aria-invalid={field === 'drill_cron'} onChange={(e) => setV({ ...v, drill_cron: e.target.value })} />
            <small className="hint">{t('replica.drill_cron_hint')}</small>
            {at('drill_cron')}
          </label>
          <label>
            {t('replica.audit_cron')}
            <input value={v.audit_cron} aria-invalid={field === 'audit_cron'} onChange={(e) => setV({ ...v, audit_cron: e.target.value })} />
            <small className="hint">{t('replica.drill_cron_hint')}</small>
            {at('audit_cron')}
          </label>
          <label>
            {t('replica.audit_sample_size')}
            <input
              type="number"
              min={1}
              max={100000}
              value={v.audit_sample_size}
              aria-invalid={field === 'audit_sample_size'}
              onChange={(e) => setV({ ...v, audit_sample_size: e.target.valueAsNumber })}
            />
            {at('audit_sample_size')}
          </label>
          <label>
            {t('replica.audit_full_cron')}
            <input value={v.audit_full_cron} aria-invalid={field === 'audit_full_cron'} onChange={(e) => setV({ ...v, audit_full_cron: e.target.value })} />
            <small className="hint">{t('replica.drill_cron_hint')}</small>
            {at('audit_full_cron')}
          </label>
          <label>
            {t('replica.default_mode')}
            <select value={v.default_mode} onChange={(e) => setV({ ...v, default_mode: e.target.value as ReplicaMode })}>
              {modes.map((m) => (
                <option key={m} value={m}>
                  {t(`replica.mode.${m}`)}
                </option>
              ))}
            </select>
            {at('default_mode')}
          </label>
          <div className="actions">
            <button type="submit" className="primary">
              {t('common.save')}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
