/** The filters of the search shown, as chips under its title; each chip's button removes that filter and searches again. */
import { useI18n } from '../i18n';
import { chipsOf, type Filters } from './search-filters';

export function SearchChips({ filters, folder, onRemove }: { filters: Filters; folder: string; onRemove: (key: keyof Filters) => void }) {
  const { t } = useI18n();
  const chips = chipsOf(filters, folder);
  if (!chips.length) return null;
  return (
    <ul className="chips search-chips" aria-label={t('search.chips')}>
      {chips.map((c) => {
        const label = t(c.label, c.values);
        return (
          <li key={c.key} className="chip">
            {label}
            <button type="button" className="icon-btn" aria-label={t('search.chip.remove', { filter: label })} onClick={() => onRemove(c.key)}>
              ×
            </button>
          </li>
        );
      })}
    </ul>
  );
}
