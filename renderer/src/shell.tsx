/** The signed-in frame: header navigation, and the screen of the current route. */
import { lazy, Suspense } from 'react';
import { useI18n } from './i18n';
import { useSession } from './auth/session';
import { useLandHome } from './auth/land-home';
import { linkClick, usePathname } from './lib/router';
import { withBase } from './lib/base';
import { Preferences } from './ui/preferences';
import { ShellMenu } from './shell-menu';
import { FilesPage } from './files/files-page';
import { MyLinks } from './share/my-links';
import { TrashPage } from './files/trash-page';
import { isDiagramRoute } from './files/diagram/diagram-route';
import { NotFoundPage } from './ui/not-found';
import { VaultHost } from './vault/vault-host';

/** `/`, `/files` and `/files/<ui path>`: everything else the app does not know is "not found". */
const isFilesRoute = (path: string) => path === '/' || path === '/files' || path.startsWith('/files/');

// The admin console, the account pages and a paired phone's shell are chunks of their own.
const AdminPage = lazy(() => import('./admin/admin-page'));
const AccountPage = lazy(() => import('./account/account-page'));
const DeviceShell = lazy(() => import('./device/device-shell'));
const DiagramPage = lazy(() => import('./files/diagram/diagram-page'));
// The office editor takes the whole window (its own chunk too).
const EditorPage = lazy(() => import('./office/editor-page'));
// App views in page placement (/app/{plugin}/{view}).
const AppPage = lazy(() => import('./apps/app-page'));

export function Shell() {
  const { t } = useI18n();
  const { user, signOut } = useSession();
  const path = usePathname();
  useLandHome(user);
  const isAdmin = user.role === 'admin';
  const loading = <p aria-busy="true">{t('common.loading')}</p>;
  // The editor page takes the window, for a paired phone too (its key reads the descriptor; the document server does the rest).
  if (path === '/edit')
    return (
      <Suspense fallback={loading}>
        <EditorPage />
      </Suspense>
    );
  // Signed in with a paired phone's key: device mode.
  if (user.key)
    return (
      <Suspense fallback={loading}>
        <DeviceShell />
      </Suspense>
    );
  // The diagram editor takes the whole window (its page has its own way back).
  if (isDiagramRoute(path))
    return (
      <Suspense fallback={loading}>
        <DiagramPage pathname={path} />
      </Suspense>
    );
  const section = path.startsWith('/admin')
    ? 'admin'
    : path.startsWith('/links')
      ? 'links'
      : path.startsWith('/trash')
        ? 'trash'
        : path.startsWith('/account')
          ? 'account'
          : path.startsWith('/app/')
            ? 'app'
            : isFilesRoute(path)
              ? 'files'
              : 'notfound';
  const nav = (href: string, key: 'nav.files' | 'nav.links' | 'nav.trash' | 'nav.admin' | 'nav.security', id: string) => (
    <a href={withBase(href)} onClick={linkClick} aria-current={section === id ? 'page' : undefined}>
      {t(key)}
    </a>
  );

  return (
    <div className="shell">
      <a className="skip" href="#main">
        {t('app.skip')}
      </a>
      <header className="topbar">
        <span className="brand">{t('app.name')}</span>
        <ShellMenu section={section}>
          <nav aria-label={t('nav.menu')}>
            {nav('/files', 'nav.files', 'files')}
            {nav('/links', 'nav.links', 'links')}
            {nav('/trash', 'nav.trash', 'trash')}
            {nav('/account', 'nav.security', 'account')}
            {isAdmin && nav('/admin', 'nav.admin', 'admin')}
          </nav>
          <div className="topbar-end">
            <Preferences />
            <span className="who" title={user.email}>
              {user.username}
            </span>
            <button type="button" onClick={() => void signOut()}>
              {t('auth.signout')}
            </button>
          </div>
        </ShellMenu>
      </header>
      <VaultHost />
      <main id="main" tabIndex={-1}>
        {section === 'files' && <FilesPage />}
        {section === 'notfound' && <NotFoundPage path={path} />}
        {section === 'links' && <MyLinks />}
        {section === 'trash' && <TrashPage />}
        {section === 'account' && (
          <Suspense fallback={loading}>
            <AccountPage />
          </Suspense>
        )}
        {section === 'app' && (
          <Suspense fallback={loading}>
            <AppPage />
          </Suspense>
        )}
        {section === 'admin' &&
          (isAdmin ? (
            <Suspense fallback={loading}>
              <AdminPage />
            </Suspense>
          ) : (
            <p className="error">{t('admin.forbidden')}</p>
          ))}
      </main>
    </div>
  );
}
