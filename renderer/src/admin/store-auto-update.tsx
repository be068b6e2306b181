/**
 * "Update automatically" on an installed app's catalogue entry (docs/app-store.md, "Updates"): off by default;
 * when on, the store's daily check installs newer versions by itself, except a new major version or one that
 * asks for new permissions (those still wait for the admin, with a bell notice saying why).
 */
import { useId } from 'react';
import { useI18n } from '../i18n';

export function AutoUpdateToggle({ name, on, busy, onChange }: { name: string; on: boolean; busy: boolean; onChange: (on: boolean) => void }) {
  const { t } = useI18n();
  const hint = useId();
  return (
    <div className="store-auto-update">
      <label className="check">
        <input
          type="checkbox"
          checked={on}
          disabled={busy}
          aria-describedby={hint}
          aria-label={t('store.cat.auto_update_of', { name })}
          data-testid="auto-update"
          onChange={(e) => onChange(e.target.checked)}
        />{' '}
        {t('store.cat.auto_update')}
      </label>
      <p id={hint} className="muted small">
        {t('store.cat.auto_update_hint')}
      </p>
    </div>
  );
}
