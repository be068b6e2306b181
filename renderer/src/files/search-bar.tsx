/** The search box and its filters (type, extensions, size range, date range, this folder only). */
import { useState, type FormEvent, type RefObject } from 'react';
import { useI18n } from '../i18n';
import type { SearchQuery } from './file-api';

const MB = 1024 * 1024;

export function SearchBar({
  folder,
  inputRef,
  onSearch,
  active,
  onClear,
}: {
  folder: string;
  inputRef: RefObject<HTMLInputElement | null>;
  onSearch: (q: SearchQuery) => void;
  active: boolean;
  onClear: () => void;
}) {
  const { t } = useI18n();
  const [q, setQ] = useState('');
  const [open, setOpen] = useState(false);
  const [f, setF] = useState({ type: '' as SearchQuery['type'], ext: '', min: '', max: '', after: '', before: '', scope: false });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setOpen(false);
    if (!q.trim()) return onClear();
    onSearch({
      q: q.trim(),
      type: f.type,
      ext: f.ext.replace(/\s+/g, '').replace(/^\./, ''),
      min_size: f.min === '' ? '' : Math.round(Number(f.min) * MB),
      max_size: f.max === '' ? '' : Math.round(Number(f.max) * MB),
      after: f.after ? new Date(f.after).toISOString() : '',
      before: f.before ? new Date(`${f.before}T23:59:59`).toISOString() : '',
      path: f.scope && folder !== '/' ? folder : '',
    });
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
        onChange={(e) => setQ(e.target.value)}
        onKeyDown={(e) => e.key === 'Escape' && (setQ(''), onClear())}
      />
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
            {t('search.type')}
            <select value={f.type} onChange={(e) => setF({ ...f, type: e.target.value as SearchQuery['type'] })}>
              <option value="">{t('search.type.any')}</option>
              <option value="file">{t('search.type.file')}</option>
              <option value="dir">{t('search.type.dir')}</option>
            </select>
          </label>
          <label>
            {t('search.ext')}
            <input value={f.ext} onChange={(e) => setF({ ...f, ext: e.target.value })} />
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
