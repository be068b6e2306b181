/** Language and theme switches (header and signed-out pages). */
import { useState } from 'react';
import { LANGS, isLang, useI18n } from '../i18n';
import { currentTheme, setTheme, type Theme } from '../lib/theme';

export function Preferences() {
  const { t, lang, setLang } = useI18n();
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
        <select value={lang} onChange={(e) => isLang(e.target.value) && setLang(e.target.value)} aria-label={t('nav.language')}>
          {Object.entries(LANGS).map(([k, v]) => (
            <option key={k} value={k}>
              {v}
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
