/** The admin console (its own lazily loaded chunk): one tab per area, each a route. */
import { useI18n, type MessageKey } from '../i18n';
import { linkClick, usePathname } from '../lib/router';
import { withBase } from '../lib/base';
import { StoragesTab } from './storages-tab';
import { UsersTab } from './users-tab';
import { AuditTab } from './audit-tab';
import { SettingsTab } from './settings-tab';
import { RolesTab } from './roles-tab';
import { GatewaysTab } from './gateways-tab';
import { AssistantTab } from './assistant-tab';
import { ExternalTab } from './external-tab';
import { ReplicationTab } from './replication-tab';
import { StatusTab } from './status-tab';
import { AppsArea } from './apps-area';
import { useStoreUpdates } from './store-updates';
import { TenantsTab } from './tenants-tab';
import { useSession } from '../auth/session';

const TABS: [string, MessageKey][] = [
  ['storages', 'admin.storages'],
  ['users', 'admin.users'],
  ['roles', 'admin.roles'],
  ['audit', 'admin.audit'],
  ['gateways', 'admin.gateways'],
  ['replication', 'admin.replication'],
  ['external', 'admin.external'],
  ['assistant', 'admin.assistant'],
  ['apps', 'apps.admin.tab'],
  ['status', 'admin.status'],
  ['settings', 'admin.settings'],
];

/** Multi-tenant mode's platform operator also manages the tenants (`/api/auth/me` says who is one). */
const OPERATOR_TABS: [string, MessageKey][] = [['tenants', 'tenants.tab']];

export default function AdminPage() {
  const { t } = useI18n();
  const tab = usePathname().split('/')[2] || 'storages';
  const operator = !!useSession().user?.platform_operator;
  const tabs = operator ? [...TABS, ...OPERATOR_TABS] : TABS;
  const updates = useStoreUpdates();
  return (
    <section className="page admin">
      <h1>{t('admin.title')}</h1>
      <nav className="tabs" aria-label={t('admin.title')}>
        {tabs.map(([id, key]) => (
          <a key={id} href={withBase(`/admin/${id}`)} onClick={linkClick} aria-current={tab === id ? 'page' : undefined}>
            {t(key)}
            {id === 'apps' && updates > 0 && (
              <>
                {' '}
                <span className="badge" aria-hidden="true" data-testid="apps-updates">
                  {updates}
                </span>
                <span className="sr-only">{t('store.updates_badge', { n: updates })}</span>
              </>
            )}
          </a>
        ))}
      </nav>
      {tab === 'storages' && <StoragesTab />}
      {tab === 'users' && <UsersTab />}
      {tab === 'roles' && <RolesTab />}
      {tab === 'audit' && <AuditTab />}
      {tab === 'gateways' && <GatewaysTab />}
      {tab === 'external' && <ExternalTab />}
      {tab === 'replication' && <ReplicationTab />}
      {tab === 'assistant' && <AssistantTab />}
      {tab === 'apps' && <AppsArea />}
      {tab === 'status' && <StatusTab />}
      {tab === 'settings' && <SettingsTab />}
      {tab === 'tenants' && operator && <TenantsTab />}
    </section>
  );
}
