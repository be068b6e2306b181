/** What apps put on a listing row: the lock badge (with the app's name and reason) and small chips for `app_state` items. */
import type { Entry } from '../api/types';
import { useI18n } from '../i18n';
import { formatDate } from '../lib/format';

export function FileMarks({ e }: { e: Entry }) {
  const { t, lang } = useI18n();
  const lock = e.locked ? e.lock : null;
  const items = e.app_state ?? [];
  if (!lock && !e.locked && !items.length) return null;
  const app = lock?.plugin_label || lock?.plugin || '';
  const reason = lock?.reason_text || lock?.reason;
  let title = reason ? t('apps.locked_reason', { app, reason }) : t('apps.locked', { app });
  if (lock?.until) title += ` (${t('apps.locked_until', { time: formatDate(lock.until, lang) })})`;
  return (
    <span className="marks">
      {e.locked && (
        <span className="lock-badge" role="img" aria-label={title} title={title}>
          🔒
        </span>
      )}
      {items.slice(0, 3).map((s) => (
        <span key={s} className="chip small" title={s}>
          {s.slice(s.indexOf(':') + 1)}
        </span>
      ))}
      {items.length > 3 && (
        <span className="chip small" title={items.slice(3).join(', ')} aria-label={t('apps.state')}>
          +{items.length - 3}
        </span>
      )}
    </span>
  );
}
