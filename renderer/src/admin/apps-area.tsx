/** Admin → Apps: the installed apps, the store's catalogue and the store connections, one sub-route each. */
import { useI18n, type MessageKey } from '../i18n';
import { linkClick, usePathname } from '../lib/router';
import { withBase } from '../lib/base';
import { AppsTab } from './apps-tab';
import { StoreCatalogue } from './store-catalogue';
import { StoreConnections } from './store-connections';

const PARTS: [string, MessageKey][] = [
  ['', 'store.nav.installed'],
  ['store', 'store.nav.catalogue'],
  ['stores', 'store.nav.stores'],
];

export function AppsArea() {
  const { t } = useI18n();
  const part = usePathname().split('/')[3] ?? '';
  return (
    <>
      <nav className="tabs subtabs" aria-label={t('store.nav.label')}>
        {PARTS.map(([id, key]) => (
          <a key={id} href={withBase(id ? `/admin/apps/${id}` : '/admin/apps')} onClick={linkClick} aria-current={part === id ? 'page' : undefined}>
            {t(key)}
          </a>
        ))}
      </nav>
      {part === '' && <AppsTab />}
      {part === 'store' && <StoreCatalogue />}
      {part === 'stores' && <StoreConnections />}
    </>
  );
}
