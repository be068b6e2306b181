/** The public app page's entry (renderer/app-page.html): language from the browser or the stored choice, then the page. */
import { StrictMode, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { I18nContext, initialLang, translator, type I18n, type Lang } from '../../i18n';
import { ToastProvider } from '../../ui/toast';
import { PublicApp } from './public-app';
import '../../styles.css';

function Root() {
  const [lang, setLang] = useState<Lang>(initialLang);
  const i18n = useMemo<I18n>(
    () => ({
      lang,
      t: translator(lang),
      setLang: (l) => {
        setLang(l);
        localStorage.setItem('filedock.lang', l);
        document.documentElement.lang = l;
      },
    }),
    [lang],
  );
  return (
    <I18nContext.Provider value={i18n}>
      <ToastProvider>
        <PublicApp />
      </ToastProvider>
    </I18nContext.Provider>
  );
}

// The page has no inline script (a strict CSP may guard it): the stored or preferred theme is applied here.
try {
  document.documentElement.dataset.theme = localStorage.getItem('filedock.theme') || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
} catch {
  // No storage: the light theme.
}
document.documentElement.lang = initialLang();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Root />
  </StrictMode>,
);
