/**
 * Single sign-on on the sign-in page: the identity provider's button when the
 * server offers OIDC, and the sentence for a provider sign-in that came back
 * refused (`/login?error=<code>`, see docs/auth.md).
 */
import { useEffect, useState } from 'react';
import type { Capabilities } from '../api/types';
import { navigate } from '../lib/router';
import { useI18n, type MessageKey } from '../i18n';

const REASONS: Record<string, MessageKey> = {
  oidc_unavailable: 'sso.err.unavailable',
  oidc_state: 'sso.err.state',
  oidc_denied: 'sso.err.denied',
  oidc_code: 'sso.err.code',
  oidc_token: 'sso.err.token',
  oidc_account: 'sso.err.account',
  oidc_unverified: 'sso.err.unverified',
  account_disabled: 'sso.err.disabled',
};

/**
 * The reason a provider sign-in was refused, read once from `?error=`; the
 * address bar is put back to `/` so a reload does not show it again.
 */
export function useSsoError(): string | null {
  const { t } = useI18n();
  const [code] = useState(() => new URLSearchParams(location.search).get('error'));
  useEffect(() => {
    if (code !== null) navigate('/', true);
  }, [code]);
  return code === null ? null : t(REASONS[code] ?? 'sso.err.other');
}

/** "Sign in with <label>" when the server lists the `oidc` driver; nothing otherwise (or while unknown). */
export function SsoButton({ options }: { options: Capabilities['auth'] | null }) {
  const { t } = useI18n();
  const label = options?.drivers.includes('oidc') ? options.oidc_label || 'SSO' : null;
  if (!label) return null;
  // Back to where the person was going; the server accepts local paths only.
  const next = location.pathname === '/login' ? '/' : location.pathname + location.search;
  return (
    <div className="sso">
      <p className="muted or">{t('sso.or')}</p>
      <a className="button sso-button" href={`/api/auth/oidc/start?next=${encodeURIComponent(next)}`}>
        {t('sso.button', { label })}
      </a>
    </div>
  );
}
