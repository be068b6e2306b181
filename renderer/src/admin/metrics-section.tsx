/**
 * Settings → Metrics: GET /metrics for Prometheus (`/api/admin/metrics`): on
 * or off, who may scrape (the token, or the LAN without one), the scrape URL,
 * and the token shown on request or replaced.
 */
import { useState } from 'react';
import type { MetricsSettingsView } from '../../../server/contract';
import { useI18n } from '../i18n';
import { useToast } from '../ui/toast';
import { ConfirmDialog } from '../ui/forms';
import * as admin from './admin-api';
import { Section, useSection } from './section';

export function MetricsSection() {
  const { t } = useI18n();
  const toast = useToast();
  const [m, error, missing, setM] = useSection(admin.metrics);
  const [token, setToken] = useState<string | null>(null);
  const [renewing, setRenewing] = useState(false);
  const patch = async (body: Partial<Pick<MetricsSettingsView, 'enabled' | 'access'>>) => {
    try {
      setM(await admin.patchMetrics(body));
      toast.info(t('settings.saved'));
    } catch (err) {
      toast.error(err);
    }
  };
  const show = async (renew: boolean) => {
    try {
      setToken(await admin.metricsToken(renew));
      if (renew) toast.info(t('metrics.token_renewed'));
    } catch (err) {
      toast.error(err);
    }
  };
  const url = `${window.location.origin}${m?.path ?? '/metrics'}`;
  return (
    <Section title={t('metrics.title')} missing={missing} error={error}>
      {m && (
        <div className="form">
          <label className="check full">
            <input type="checkbox" checked={m.enabled} onChange={(e) => void patch({ enabled: e.target.checked })} />
            {t('metrics.enabled')}
          </label>
          <label>
            {t('metrics.access')}
            <select value={m.access} disabled={!m.enabled} onChange={(e) => void patch({ access: e.target.value as MetricsSettingsView['access'] })}>
              <option value="token">{t('metrics.access.token')}</option>
              <option value="lan">{t('metrics.access.lan')}</option>
            </select>
          </label>
          <p className="hint full">{t(m.access === 'lan' ? 'metrics.access.lan_hint' : 'metrics.access.token_hint')}</p>
          {m.enabled && (
            <>
              <p className="full">
                {t('metrics.url')}{' '}
                <code className="secret" data-testid="metrics-url">
                  {url}
                </code>
              </p>
              {token !== null && (
                <p className="full">
                  {t('metrics.token')}{' '}
                  <code className="secret" data-testid="metrics-token">
                    {token}
                  </code>
                </p>
              )}
              <div className="actions full">
                {token === null && m.token_set && (
                  <button type="button" onClick={() => void show(false)}>
                    {t('metrics.token_show')}
                  </button>
                )}
                <button type="button" onClick={() => setRenewing(true)}>
                  {t('metrics.token_renew')}
                </button>
              </div>
            </>
          )}
          {renewing && (
            <ConfirmDialog
              title={t('metrics.token_renew')}
              text={t('metrics.token_renew_confirm')}
              confirmLabel={t('metrics.token_renew')}
              danger
              onClose={() => setRenewing(false)}
              onConfirm={() => void show(true)}
            />
          )}
        </div>
      )}
    </Section>
  );
}
