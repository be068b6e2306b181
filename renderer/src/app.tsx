/**
 * Boot: language, then first-run check, then the session. Signed out shows
 * the sign-in (or setup) page; signed in shows the shell. Any 401 later sends
 * the person back to the sign-in page.
 */
import { useCallback, useEffect, useMemo, useState } from 'react';
import { api, setUnauthenticatedHandler } from './api/client';
import type { User } from './api/types';
import { I18nContext, initialLang, isLang, translator, type I18n, type Lang } from './i18n';
import { ToastProvider } from './ui/toast';
import { LoginPage } from './auth/login-page';
import { SetupPage } from './auth/setup-page';
import { SessionContext, type Session } from './auth/session';
import { Shell } from './shell';
import { navigate } from './lib/router';

type Boot = { kind: 'loading' } | { kind: 'setup'; local: boolean } | { kind: 'signed-out' } | { kind: 'signed-in'; user: User };

export function App() {
  const [lang, setLangState] = useState<Lang>(initialLang);
  const [boot, setBoot] = useState<Boot>({ kind: 'loading' });

  const adopt = useCallback((user: User) => {
    if (isLang(user.language)) setLangState(user.language);
    // A refused single sign-on lands on /login, which is no screen of the signed-in shell.
    if (location.pathname === '/login') navigate('/', true);
    setBoot({ kind: 'signed-in', user });
  }, []);

  useEffect(() => {
    setUnauthenticatedHandler(() => setBoot({ kind: 'signed-out' }));
    (async () => {
      try {
        const setup = await api<{ needed: boolean; local: boolean }>('/api/auth/setup', { quiet401: true });
        if (setup?.needed) return setBoot({ kind: 'setup', local: setup.local });
      } catch {
        // An older server without the setup route: go on to the session check.
      }
      try {
        adopt((await api<{ user: User }>('/api/auth/me', { quiet401: true })).user);
      } catch {
        setBoot({ kind: 'signed-out' });
      }
    })();
    return () => setUnauthenticatedHandler(null);
  }, [adopt]);

  useEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);

  const signedIn = boot.kind === 'signed-in';
  const i18n = useMemo<I18n>(
    () => ({
      lang,
      t: translator(lang),
      setLang: (l) => {
        setLangState(l);
        localStorage.setItem('filedock.lang', l);
        // The account keeps the choice so server sentences (errors, mails) follow it.
        if (signedIn) void api('/api/auth/me', { method: 'PATCH', body: { language: l } }).catch(() => {});
      },
    }),
    [lang, signedIn],
  );

  const session = useMemo<Session | null>(
    () =>
      boot.kind === 'signed-in'
        ? {
            user: boot.user,
            signOut: async () => {
              await api('/api/auth/logout', { method: 'POST', quiet401: true }).catch(() => {});
              setBoot({ kind: 'signed-out' });
            },
          }
        : null,
    [boot],
  );

  return (
    <I18nContext.Provider value={i18n}>
      <ToastProvider>
        {boot.kind === 'loading' && <p className="boot" aria-busy="true">{i18n.t('common.loading')}</p>}
        {boot.kind === 'setup' && <SetupPage local={boot.local} onDone={adopt} />}
        {boot.kind === 'signed-out' && <LoginPage onSignedIn={adopt} />}
        {session && (
          <SessionContext.Provider value={session}>
            <Shell />
          </SessionContext.Provider>
        )}
      </ToastProvider>
    </I18nContext.Provider>
  );
}
