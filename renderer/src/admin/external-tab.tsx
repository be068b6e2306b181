/**
 * Admin → External services (`GET/PUT /api/admin/external[/:name]`,
 * `POST …/:name/test`): the document server (URL, shared JWT secret,
 * callback address) and the diagram editor (URL). The secret is write-only:
 * it reads back `***`, an untouched field keeps it. A service set by the
 * environment is shown read-only with the variables to change. Test shows
 * `{healthy, version, latency_ms}` and, for the document server, both legs:
 * this service → document server, and whether the document server reached
 * back (reached / not reached / unmeasured).
 */
import { useEffect, useState } from 'react';
import type { ExternalService, ExternalTestReport } from '../api/types';
import { forgetCapabilities } from '../api/capabilities';
import { formatDate } from '../lib/format';
import { useI18n, type MessageKey } from '../i18n';
import { useToast } from '../ui/toast';
import { useSubmit } from '../ui/use-submit';
import * as admin from './admin-api';
import { Section, useSection } from './section';

const TITLES: Record<string, MessageKey> = { docserver: 'ext.docserver', diagram: 'ext.diagram' };
const ENV: Record<string, string> = { docserver: 'SERVICE_DOCSERVER_URL, SERVICE_DOCSERVER_JWT, SERVICE_DOCSERVER_CALLBACK_URL' };
const PROBE: Record<NonNullable<ExternalTestReport['fetch_probe']>, MessageKey> = {
  reached: 'ext.reached',
  not_reached: 'ext.not_reached',
  unmeasured: 'ext.unmeasured',
};

export function ExternalTab() {
  const { t } = useI18n();
  const [list, error, missing, setList] = useSection<ExternalService[]>(admin.externalServices);
  const replace = (row: ExternalService) => setList((list ?? []).map((s) => (s.name === row.name ? row : s)));
  return (
    <div className="settings">
      <p className="hint">{t('ext.intro')}</p>
      {(missing || !!error) && (
        <Section title={t('admin.external')} missing={missing} error={error}>
          {null}
        </Section>
      )}
      {list?.map((s) => (
        <ServiceForm key={s.name} service={s} onSaved={replace} />
      ))}
    </div>
  );
}

function ServiceForm({ service: s, onSaved }: { service: ExternalService; onSaved: (s: ExternalService) => void }) {
  const { t, lang } = useI18n();
  const toast = useToast();
  const docserver = s.name === 'docserver';
  const [url, setUrl] = useState(s.url);
  const [secret, setSecret] = useState('');
  const [callback, setCallback] = useState(s.callback_url);
  const [report, setReport] = useState<ExternalTestReport | null>(null);
  useEffect(() => {
    setUrl(s.url);
    setCallback(s.callback_url);
    setSecret('');
  }, [s]);

  const saving = useSubmit(async () => {
    // An empty secret field keeps the stored secret (`***`); the environment's rows are not sent at all.
    const body: Record<string, string> = { url: url.trim() };
    if (docserver) {
      body.jwt_secret = secret || (s.jwt_secret ? '***' : '');
      body.callback_url = callback.trim();
    }
    onSaved(await admin.saveExternal(s.name, body));
    setSecret('');
    forgetCapabilities();
    toast.info(t('settings.saved'));
  });
  const testing = useSubmit(async () => {
    setReport(null);
    setReport(await admin.testExternal(s.name));
  });
  const busy = saving.busy || testing.busy;
  const title = TITLES[s.name] ? t(TITLES[s.name]) : s.name;
  const ro = s.env_managed;

  return (
    <section className="card" aria-label={title} data-testid={`ext-${s.name}`}>
      <h2>{title}</h2>
      <p data-testid={`ext-${s.name}-state`}>
        {s.enabled ? t('ext.active') : t('ext.inactive')}
        {s.last_check && ` · ${t(s.healthy ? 'ext.healthy' : 'ext.unhealthy')} (${formatDate(s.last_check, lang)})`}
      </p>
      {ro && (
        <p className="hint" data-testid={`ext-${s.name}-env`}>
          {t('ext.env', { names: ENV[s.name] ?? '' })}
        </p>
      )}
      <form className="form two-col" onSubmit={saving.submit}>
        <label className="full">
          {t('ext.url')}
          <input type="url" value={url} readOnly={ro} placeholder="https://docs.example.lan" onChange={(e) => setUrl(e.target.value)} />
        </label>
        {docserver && (
          <>
            <label>
              {t('ext.jwt')}
              <input
                type="password"
                autoComplete="new-password"
                value={secret}
                readOnly={ro}
                placeholder={s.jwt_secret ? s.jwt_secret : ''}
                aria-describedby="ext-jwt-hint"
                onChange={(e) => setSecret(e.target.value)}
              />
              <span className="hint" id="ext-jwt-hint">
                {s.jwt_secret ? t('ext.secret_kept') : t('ext.secret_none')}
              </span>
            </label>
            <label>
              {t('ext.callback')}
              <input type="url" value={callback} readOnly={ro} onChange={(e) => setCallback(e.target.value)} aria-describedby="ext-cb-hint" />
              <span className="hint" id="ext-cb-hint">
                {t('ext.callback_hint')}
              </span>
            </label>
          </>
        )}
        <div className="full" aria-live="polite">
          {[testing.error, saving.error].map(
            (e, i) =>
              e && (
                <p key={i} className="error" role="alert">
                  {e}
                </p>
              ),
          )}
          {report && <Report report={report} docserver={docserver} />}
        </div>
        <div className="actions full">
          <button type="button" disabled={busy || !s.url} onClick={() => void testing.submit()}>
            {t('ext.test')}
          </button>
          {!ro && (
            <button type="submit" className="primary" disabled={busy}>
              {t('common.save')}
            </button>
          )}
        </div>
      </form>
    </section>
  );
}

function Report({ report: r, docserver }: { report: ExternalTestReport; docserver: boolean }) {
  const { t } = useI18n();
  return (
    <dl className="ext-report" data-testid="ext-report">
      <dt>{t('ext.leg1')}</dt>
      <dd className={r.healthy ? 'ok' : 'error'} data-testid="ext-healthy">
        {t(r.healthy ? 'ext.healthy' : 'ext.unhealthy')}
        {r.error ? `: ${r.error}` : ''}
      </dd>
      <dt>{t('ext.version')}</dt>
      <dd data-testid="ext-version">{r.version ?? '—'}</dd>
      <dt>{t('ext.latency')}</dt>
      <dd data-testid="ext-latency">{t('ext.ms', { n: r.latency_ms })}</dd>
      {docserver && (
        <>
          <dt>{t('ext.leg2', { url: r.callback_base ?? '' })}</dt>
          <dd className={r.fetch_probe === 'reached' ? 'ok' : r.fetch_probe === 'not_reached' ? 'error' : undefined} data-testid="ext-probe">
            {r.fetch_probe ? t(PROBE[r.fetch_probe]) : t('ext.not_tried')}
          </dd>
        </>
      )}
    </dl>
  );
}
