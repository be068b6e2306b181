/**
 * The shell of a paired phone (device mode): no admin, account or link
 * pages, only the files of the key's folder, which it opens at start. A strip
 * says which folder and until when; "Forget this device" drops the stored key
 * (the key itself stays valid until its owner revokes it).
 */
import { useEffect, useState } from 'react';
import { useSession } from '../auth/session';
import { FilesPage } from '../files/files-page';
import { useI18n } from '../i18n';
import { formatDate } from '../lib/format';
import { navigate, usePathname } from '../lib/router';
import { routeOf } from '../lib/ui-path';
import { ConfirmDialog } from '../ui/forms';
import { Preferences } from '../ui/preferences';
import { forgetDeviceKey } from './device-key';

export default function DeviceShell() {
  const { t, lang } = useI18n();
  const key = useSession().user.key!;
  const root = key.root ?? '/';
  const path = usePathname();
  const [forgetting, setForgetting] = useState(false);
  useEffect(() => {
    if (path.replace(/\/+$/, '') === '' || !path.startsWith('/files/')) navigate(routeOf(root), true);
  }, [path, root]);

  const forget = () => {
    forgetDeviceKey();
    location.replace('/');
  };

  return (
    <div className="shell device">
      <a className="skip" href="#main">
        {t('app.skip')}
      </a>
      <header className="topbar">
        <span className="brand">{t('app.name')}</span>
        <p className="device-strip" data-testid="device-strip">
          {key.expires_at ? t('device.strip', { folder: root, date: formatDate(key.expires_at, lang) }) : t('device.strip_forever', { folder: root })}
        </p>
        <div className="topbar-end">
          <Preferences />
          <button type="button" onClick={() => setForgetting(true)}>
            {t('device.forget')}
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <FilesPage />
      </main>
      {forgetting && (
        <ConfirmDialog
          title={t('device.forget')}
          text={t('device.forget_text')}
          confirmLabel={t('device.forget')}
          danger
          onConfirm={forget}
          onClose={() => setForgetting(false)}
        />
      )}
    </div>
  );
}
