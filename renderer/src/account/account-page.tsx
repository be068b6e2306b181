/**
 * The account pages (a lazily loaded chunk): "Security" (`/account`, second
 * factors), "Sessions & keys" (`/account/access`) and "Vault" (`/account/vault`). The tray's "Pair a
 * phone…" opens `/account?pair=1&base=<LAN URL>`, which shows the second tab
 * at its pairing section.
 */
import { useI18n } from '../i18n';
import { linkClick, usePathname } from '../lib/router';
import { withBase } from '../lib/base';
import { AccessPage } from './access-page';
import { SecurityPage } from './security-page';
import { ConnectApps } from './connect-apps';
import { useSession } from '../auth/session';
import VaultPage from '../vault/vault-page';

export default function AccountPage() {
  const { t } = useI18n();
  const { user } = useSession();
  const path = usePathname();
  const pair = new URLSearchParams(location.search).get('pair') === '1';
  const tab = path === '/account/access' || pair ? 'access' : path === '/account/vault' ? 'vault' : 'security';
  return (
    <div className="page settings account">
      <nav className="tabs" aria-label={t('account.title')}>
        <a href={withBase('/account')} onClick={linkClick} aria-current={tab === 'security' ? 'page' : undefined}>
          {t('account.mfa')}
        </a>
        <a href={withBase('/account/access')} onClick={linkClick} aria-current={tab === 'access' ? 'page' : undefined}>
          {t('account.access')}
        </a>
        <a href={withBase('/account/vault')} onClick={linkClick} aria-current={tab === 'vault' ? 'page' : undefined}>
          {t('vault.title')}
        </a>
      </nav>
      {tab === 'security' && <SecurityPage />}
      {tab === 'access' && <AccessPage pair={pair} />}
      {tab === 'vault' && <VaultPage />}
      {tab === 'access' && <ConnectApps user={user.username} />}
    </div>
  );
}
