/**
 * Single sign-on (OIDC) settings: issuer, client, scopes, claim names, the
 * admin group and the button's name. Test runs discovery with the form's
 * values; Save is refused by the server unless discovery works. Fields set by
 * SERVICE_OIDC_* are shown read-only; the client secret is write-only (an
 * untouched field keeps the stored one).
 */
import { useEffect, useState } from 'react';
import type { OidcSettingsView, OidcTestResult } from '../api/types';
import { useI18n, type MessageKey } from '../i18n';
import { useToast } from '../ui/toast';
import { useSubmit } from '../ui/use-submit';
import * as admin from './admin-api';
import { Section, useSection } from './section';

type TextField =
  | 'issuer'
  | 'client_id'
  | 'client_secret'
  | 'scopes'
  | 'email_claim'
  | 'username_claim'
  | 'groups_claim'
  | 'admin_group'
  | 'label'
  | 'redirect_url';
const FIELDS: Array<[TextField, MessageKey]> = [
  ['issuer', 'sso.issuer'],
  ['client_id', 'sso.client_id'],
  ['client_secret', 'sso.client_secret'],
  ['scopes', 'sso.scopes'],
  ['email_claim', 'sso.email_claim'],
  ['username_claim', 'sso.username_claim'],
  ['groups_claim', 'sso.groups_claim'],
  ['admin_group', 'sso.admin_group'],
  ['label', 'sso.label'],
  ['redirect_url', 'sso.redirect_url'],
];

type Form = Record<TextField, string> & { enabled: boolean };

const formOf = (v: OidcSettingsView): Form => ({ ...v, client_secret: '' });

export function OidcSection() {
  const { t } = useI18n();
  const toast = useToast();
  const [v, error, missing, setV] = useSection<OidcSettingsView>(admin.oidc);
  const [f, setF] = useState<Form | null>(null);
  const [found, setFound] = useState<OidcTestResult | null>(null);
  useEffect(() => void (v && setF(formOf(v))), [v]);

  /** What to send: environment-held fields left out, an untouched secret left out (kept). */
  const body = (form: Form): Record<string, unknown> => {
    const out: Record<string, unknown> = { enabled: form.enabled };
    for (const [k] of FIELDS) if (!v!.env_managed.includes(k) && !(k === 'client_secret' && form.client_secret === '')) out[k] = form[k];
    return out;
  };
  const saving = useSubmit(async () => {
    setFound(null);
    setV(await admin.saveOidc(body(f!)));
    toast.info(t('settings.saved'));
  });
  const testing = useSubmit(async () => {
    setFound(null);
    setFound(await admin.testOidc(body(f!)));
  });
  const busy = saving.busy || testing.busy;

  return (
    <Section title={t('sso.title')} missing={missing} error={error}>
      {v && f && (
        <form className="form two-col sso-form" onSubmit={saving.submit} aria-label={t('sso.title')}>
          <p className="hint full">{t('sso.intro')}</p>
          <p className="full" data-testid="sso-state">
            {v.active ? t('sso.state_on') : v.configured ? t('sso.state_off') : t('sso.state_unset')}
          </p>
          <label className="check full">
            <input type="checkbox" checked={f.enabled} onChange={(e) => setF({ ...f, enabled: e.target.checked })} />
            {t('sso.enabled')}
          </label>
          {FIELDS.map(([k, label]) => {
            const fromEnv = v.env_managed.includes(k);
            return (
              <label key={k} className={k === 'issuer' || k === 'redirect_url' ? 'full' : undefined}>
                {t(label)}
                <input
                  type={k === 'client_secret' ? 'password' : 'text'}
                  autoComplete="off"
                  value={k === 'client_secret' && fromEnv ? '' : f[k]}
                  placeholder={k === 'client_secret' && v.client_secret ? t('sso.secret_kept') : k === 'redirect_url' ? v.effective_redirect_url : undefined}
                  readOnly={fromEnv}
                  aria-describedby={fromEnv ? `sso-env-${k}` : undefined}
                  onChange={(e) => setF({ ...f, [k]: e.target.value })}
                />
                {fromEnv && (
                  <span className="hint" id={`sso-env-${k}`}>
                    {t('sso.from_env', { name: `SERVICE_OIDC_${k.toUpperCase()}` })}
                  </span>
                )}
              </label>
            );
          })}
          <p className="hint full">{t('sso.register', { url: v.effective_redirect_url })}</p>
          <div className="full" aria-live="polite">
            {[testing.error, saving.error].map(
              (e, i) =>
                e && (
                  <p key={i} className="error" role="alert">
                    {e}
                  </p>
                ),
            )}
            {found && (
              <p className="ok" data-testid="sso-found">
                {t('sso.found', { issuer: found.issuer })}
              </p>
            )}
          </div>
          <div className="actions full">
            <button type="button" disabled={busy} onClick={() => void testing.submit()}>
              {t('sso.test')}
            </button>
            <button type="submit" className="primary" disabled={busy}>
              {t('common.save')}
            </button>
          </div>
        </form>
      )}
    </Section>
  );
}
