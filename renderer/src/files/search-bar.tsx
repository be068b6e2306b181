/**
 * The search box and its filters (kind, type, extensions, size range, dates modified and taken, this folder only), with
 * the recent searches of this browser offered as the box's suggestions. The filters in effect belong to
 * the page (its chips remove them one by one); the panel edits a copy until Apply.
 */
import { useEffect, useState, type FormEvent, type RefObject } from 'react';
import { useI18n } from '../i18n';
import { KINDS, type Filters, type Kind } from './search-filters';

export function SearchBar({
  folder,
  inputRef,
  filters,
  recent,
  onSearch,
  active,
  onClear,
}: {
  folder: string;
  inputRef: RefObject<HTMLInputElement | null>;
  filters: Filters;
  recent: string[];
  onSearch: (q: string, f: Filters) => void;
  active: boolean;
  onClear: () => void;
}) {
  const { t } = useI18n();
  const [q, setQ] = useState('');
  const [open, setOpen] = useState(false);
  const [f, setF] = useState(filters);
  useEffect(() => setF(filters), [filters]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setOpen(false);
    if (!q.trim()) return onClear();
    onSearch(q, f);
  };

  return (
    <form role="search" className="search" onSubmit={submit}>
      <label className="sr-only" htmlFor="search-q">
        {t('search.label')}
      </label>
      <input
        id="search-q"
        ref={inputRef}
        type="search"
        placeholder={t('search.placeholder')}
        value={q}
        list="search-recent"
        autoComplete="off"
        onChange={(e) => setQ(e.target.value)}
        onKeyDown={(e) => e.key === 'Escape' && (setQ(''), onClear())}
      />
      <datalist id="search-recent">
        {recent.map((r) => (
          <option key={r} value={r} />
        ))}
      </datalist>
      <button
        type="button"
        className="icon-btn"
        aria-expanded={open}
        aria-controls="search-filters"
        onClick={() => setOpen(!open)}
        title={t('search.filters')}
        aria-label={t('search.filters')}
      >
        ⚙
      </button>
      {active && (
        <button
          type="button"
          onClick={() => {
            setQ('');
            onClear();
          }}
        >
          {t('search.clear')}
        </button>
      )}
      {open && (
        <fieldset id="search-filters" className="filters">
          <legend className="sr-only">{t('search.filters')}</legend>
          <label>
            {t('search.kind')}
            <select value={f.kind} onChange={(e) => setF({ ...f, kind: e.target.value as Kind | '' })}>
              <option value="">{t('search.kind.any')}</option>
              {(Object.keys(KINDS) as Kind[]).map((k) => (
                <option key={k} value={k}>
                  {t(`search.kind.${k}`)}
                </option>
              ))}
            </select>
          </label>
          <label>
            {t('search.type')}
            <select value={f.type} onChange={(e) => setF({ ...f, type: e.target.value as Filters['type'] })}>
              <option value="">{t('search.type.any')}</option>
              <option value="file">{t('search.type.file')}</option>
              <option value="dir">{t('search.type.dir')}</option>
            </select>
          </label>
          <label>
            {t('search.ext')}
            <input
              value={f.kind ? '' : f.ext}
              disabled={!!f.kind}
              placeholder={f.kind ? KINDS[f.kind].replaceAll(' ', ',') : ''}
              onChange={(e) => setF({ ...f, ext: e.target.value })}
            />
          </label>
          <label>
            {t('search.min_size')}
            <input type="number" min={0} step="any" value={f.min} onChange={(e) => setF({ ...f, min: e.target.value })} />
          </label>
          <label>
            {t('search.max_size')}
            <input type="number" min={0} step="any" value={f.max} onChange={(e) => setF({ ...f, max: e.target.value })} />
          </label>
          <label>
            {t('search.after')}
            <input type="date" value={f.after} onChange={(e) => setF({ ...f, after: e.target.value })} />
          </label>
          <label>
            {t('search.before')}
            <input type="date" value={f.before} onChange={(e) => setF({ ...f, before: e.target.value })} />
          </label>
          <label>
            {t('search.taken_from')}
            <input type="date" value={f.takenFrom} onChange={(e) => setF({ ...f, takenFrom: e.target.value })} />
          </label>
          <label>
            {t('search.taken_to')}
            <input type="date" value={f.takenTo} onChange={(e) => setF({ ...f, takenTo: e.target.value })} />
          </label>
          <label className="check">
            <input type="checkbox" checked={f.scope} disabled={folder === '/'} onChange={(e) => setF({ ...f, scope: e.target.checked })} />
            {t('search.scope')}
          </label>
          <button type="submit" className="primary">
            {t('common.apply')}
          </button>
        </fieldset>
      )}
    </form>
  );
}
