/** Where the open folder sits, each ancestor a link; the last crumb is the current page. */
import { useI18n } from '../i18n';
import { crumbs, routeOf } from '../lib/ui-path';
import { linkClick } from '../lib/router';
import { withBase } from '../lib/base';

/** `label` names a crumb otherwise than its segment (an encrypted folder's decrypted names). */
export function Breadcrumb({ path, label }: { path: string; label?: (crumbPath: string, name: string) => string }) {
  const { t } = useI18n();
  const list = crumbs(path);
  return (
    <nav aria-label={t('files.breadcrumb')} className="crumbs">
      <ol>
        <li>
          <a href={withBase('/files')} onClick={linkClick} aria-current={list.length === 0 ? 'page' : undefined}>
            {t('files.root')}
          </a>
        </li>
        {list.map((c, i) => (
          <li key={c.path}>
            <a href={withBase(routeOf(c.path))} onClick={linkClick} aria-current={i === list.length - 1 ? 'page' : undefined}>
              {label ? label(c.path, c.name) : c.name}
            </a>
          </li>
        ))}
      </ol>
    </nav>
  );
}
