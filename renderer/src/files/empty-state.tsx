/**
 * What an empty listing says. The top level (`/`) lists the caller's storages:
 * empty there means none exists yet (an admin is shown where to add one) or
 * none is shared with this person yet; a folder says it can take a drop.
 */
import { useI18n } from '../i18n';
import { linkClick } from '../lib/router';
import { withBase } from '../lib/base';

export function EmptyState({ root, admin }: { root: boolean; admin: boolean }) {
  const { t } = useI18n();
  if (!root) return <p className="empty">{t('files.empty')}</p>;
  if (!admin)
    return (
      <p className="empty" role="status">
        {t('files.empty_root_user')}
      </p>
    );
  return (
    <div className="empty empty-root" role="status">
      <p>{t('files.empty_root_admin')}</p>
      <a className="button primary" href={withBase('/admin/storages')} onClick={linkClick}>
        {t('files.add_storage')}
      </a>
    </div>
  );
}
