/**
 * Admin → Status: what the desktop service is doing right now, from
 * GET /api/admin/status (refreshed every 5 s): background work under the
 * governor, public uplink use, offline storages, request budgets of metered
 * storages, search inside documents per storage, and whether the computer
 * is kept awake (with the long ops a restart resumes). The tray shows the same words in short.
 */
import { useEffect, useState } from 'react';
import type { AdminStatus, TenantQuotaUsage } from '../../../server/contract';
import { useI18n } from '../i18n';
import { errorText } from '../ui/toast';
import { ApiError } from '../api/client';
import { useSession } from '../auth/session';
import * as admin from './admin-api';
import { QUOTA_KINDS, quotaLine } from './quota-line';
import { BackupStatus } from './backup-status';

const REFRESH_MS = 5000;
/** Mbit/s with one decimal at most ("0", "0.3", "8"). */
const mbps = (bps: number) => String(Number((bps / 125_000).toFixed(1)));

export function StatusTab() {
  const { t } = useI18n();
  const [s, setS] = useState<AdminStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  // Quotas exist in multi-tenant mode only (no route otherwise): the operator sees its own tenant's beside the status.
  const operator = !!useSession().user?.platform_operator;
  useEffect(() => {
    let live = true;
    const load = () =>
      admin.status().then(
        (v) => live && (setS(v), setError(null), setTick((n) => n + 1)),
        (e) => live && setError(e),
      );
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);
  // A tenant admin reads their tenant's quotas; the rest of the status is the platform operator's (403 `supertenant_only` to them).
  if (error && !s)
    return (
      <div className="settings" data-testid="admin-status">
        {error instanceof ApiError && error.code === 'supertenant_only' && <QuotaStatus tick={tick} />}
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      </div>
    );
  if (!s) return <p className="muted">{t('common.loading')}</p>;
  const g = s.governor;
  const e = s.egress;
  const awake = s.sleep_inhibitor;
  const why = g.paused
    ? t(g.pause_reasons.includes('sleep') ? 'status.paused_sleep' : 'status.paused')
    : g.power.on_battery
      ? t('status.on_battery')
      : !g.power.user_idle
        ? t('status.user_busy')
        : null;
  return (
    <div className="settings" data-testid="admin-status">
      <section className="card" aria-label={t('status.background')}>
        <h2>{t('status.background')}</h2>
        <p>{t('status.lanes', { active: g.active, lanes: g.lanes, waiting: g.waiting })}</p>
        <p>
          {g.budget_percent > 0 ? t('status.cpu_of', { cpu: g.cpu_percent, budget: g.budget_percent }) : t('status.cpu', { cpu: g.cpu_percent })}
          {g.over_budget && (
            <>
              {' '}
              <span className="pill">{t('status.over_budget')}</span>
            </>
          )}
        </p>
        {why && (
          <p>
            <span className="pill">{why}</span>
          </p>
        )}
      </section>
      <section className="card" aria-label={t('status.uplink')}>
        <h2>{t('status.uplink')}</h2>
        <p>
          {e.budget_bps > 0
            ? t('status.egress_of', { now: mbps(e.current_bps), budget: mbps(e.budget_bps) })
            : t('status.egress', { now: mbps(e.current_bps) })}
        </p>
        <p>{t('status.streams', { active: e.active_streams, waiting: e.waiting_streams })}</p>
        {e.suspended_links > 0 && (
          <p>
            <span className="pill">{t('status.suspended', { n: e.suspended_links })}</span>
          </p>
        )}
      </section>
      <section className="card" aria-label={t('status.storages')}>
        <h2>{t('status.storages')}</h2>
        {s.offline_storages.length === 0 ? (
          <p>{t('status.all_online')}</p>
        ) : (
          <ul>
            {s.offline_storages.map((o) => (
              <li key={o.storage_id}>
                <strong>{o.name}</strong>{' '}
                <span className="pill">
                  {t(o.volume_state === 'foreign' ? 'status.foreign' : o.volume_state === 'missing' ? 'status.unplugged' : 'status.unreachable')}
                </span>
                {o.reason && <span className="muted"> {o.reason}</span>}
              </li>
            ))}
          </ul>
        )}
        {s.request_budgets.length > 0 && (
          <ul aria-label={t('status.budgets')}>
            {s.request_budgets.map((b) => (
              <li key={b.storage_id}>
                {b.name}: {b.budget_per_day > 0 ? t('meter.used_of', { n: b.used_today, budget: b.budget_per_day }) : t('meter.used', { n: b.used_today })}
                {b.exhausted && (
                  <>
                    {' '}
                    <span className="pill">{t('meter.exhausted')}</span>
                  </>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>
      <section className="card" aria-label={t('status.awake')}>
        <h2>{t('status.awake')}</h2>
        <p>{awake.active ? t('status.awake_on', { why: awake.reasons.map((r) => `${r.count} × ${r.kind}`).join(', ') }) : t('status.awake_off')}</p>
        {awake.resumable_ops.length > 0 && (
          <ul aria-label={t('status.resumable')}>
            {awake.resumable_ops.map((o) => (
              <li key={o.id}>
                {o.kind} · {Math.round(o.progress * 100)} %{o.message ? ` · ${o.message}` : ''}
              </li>
            ))}
          </ul>
        )}
      </section>
      {operator && <QuotaStatus tick={tick} />}
      <TextIndexStatus status={s.text_index} />
      <BackupStatus tick={tick} />
      <section className="card" aria-label={t('status.health')}>
        <h2>{t('status.health')}</h2>
        <p>{t('status.health_line', { p99: s.event_loop.p99_ms, rss: s.memory.rss_mb, up: Math.round(s.uptime_s / 60) })}</p>
      </section>
    </div>
  );
}

/**
 * The tenant's quotas and what it uses of each (multi-tenant mode, GET /api/admin/quotas; docs/tenants.md,
 * "Step 4: quotas"): nothing where the route does not exist (single-tenant mode). Read again with each status refresh.
 */
function QuotaStatus({ tick }: { tick: number }) {
  const { t } = useI18n();
  const [q, setQ] = useState<TenantQuotaUsage | null>(null);
  useEffect(() => {
    let live = true;
    admin.quotas().then(
      (v) => live && setQ(v),
      () => live && setQ(null),
    );
    return () => {
      live = false;
    };
  }, [tick]);
  if (!q) return null;
  return (
    <section className="card" aria-label={t('status.quotas')} data-testid="status-quotas">
      <h2>{t('status.quotas')}</h2>
      <ul>
        {QUOTA_KINDS.map((k) => {
          const line = q[k];
          const over = line.limit !== null && line.used >= line.limit;
          return (
            <li key={k} data-quota={k}>
              {quotaLine(t, k, line.used, line.limit)}
              {over && (
                <>
                  {' '}
                  <span className="pill">{t('status.quota_full')}</span>
                </>
              )}
            </li>
          );
        })}
      </ul>
      {q.egress_share !== null && <p>{t('status.quota_egress', { share: q.egress_share })}</p>}
    </section>
  );
}

/**
 * Search inside documents: per storage, files indexed, waiting (and whether on the request budget), failed (the
 * newest with their reasons) and skipped.
 */
function TextIndexStatus({ status }: { status: AdminStatus['text_index'] }) {
  const { t } = useI18n();
  return (
    <section className="card" aria-label={t('status.text_index')} data-testid="status-text-index">
      <h2>{t('status.text_index')}</h2>
      {!status.enabled && <p>{t('status.text_off')}</p>}
      {status.enabled && status.storages.length === 0 && <p>{t('status.text_none')}</p>}
      {status.storages.map((x) => (
        <div key={x.storage_id}>
          <p>
            <strong>{x.name}</strong>: {t('status.text_line', { done: x.done, pending: x.pending, failed: x.failed, skipped: x.skipped })}
          </p>
          {x.waiting_budget && (
            <p data-testid="status-text-budget">
              <span className="pill">{t('status.text_budget_pill')}</span>{' '}
              {t('status.text_budget', {
                used: x.waiting_budget.used,
                limit: x.waiting_budget.limit,
                budget: x.waiting_budget.budget,
                until: x.waiting_budget.until,
              })}
            </p>
          )}
          {x.failures.length > 0 && (
            <ul aria-label={t('status.text_failures', { name: x.name })}>
              {x.failures.map((f) => (
                <li key={f.path}>
                  {f.path} <span className="muted">{f.reason}</span>
                </li>
              ))}
            </ul>
          )}
        </div>
      ))}
    </section>
  );
}
