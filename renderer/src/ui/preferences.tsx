/** Language and theme switches (header and signed-out pages). */
import { useState } from 'react';
import { useI18n } from '../i18n';
import { useLanguages } from './languages';
import { currentTheme, setTheme, type Theme } from '../lib/theme';

export function Preferences() {
  const { t, lang, setLang } = useI18n();
  const { languages, refresh } = useLanguages();
  const [theme, setThemeState] = useState<Theme>(currentTheme);
  const toggle = () => {
    const next = theme === 'dark' ? 'light' : 'dark';
    setTheme(next);
    setThemeState(next);
  };
  return (
    <div className="prefs">
      <label className="inline">
        <span className="sr-only">{t('nav.language')}</span>
        <select value={lang} onChange={(e) => setLang(e.target.value)} onFocus={refresh} onPointerDown={refresh} aria-label={t('nav.language')}>
          {languages.map((l) => (
            <option key={l.id} value={l.id}>
              {l.name}
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        className="icon-btn"
        onClick={toggle}
        aria-pressed={theme === 'dark'}
        aria-label={t('nav.theme')}
        title={theme === 'dark' ? t('nav.theme.light') : t('nav.theme.dark')}
      >
        {theme === 'dark' ? '☀' : '☾'}
      </button>
    </div>
  );
}
