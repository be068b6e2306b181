/**
 * Boot: language, then a pairing link's key (device mode), the first-run
 * check, then the session. Signed out shows the sign-in (or setup, or
 * sign-up) page; signed in shows the shell. Any 401 later sends the person
 * back to the sign-in page; on a paired device it also forgets the key that
 * stopped working, and says so.
 */
import { lazy, Suspense, useCallback, useEffect, useMemo, useState } from 'react';
import { api, ApiError, setUnauthenticatedHandler } from './api/client';
import type { User } from './api/types';
import { I18nContext, initialLang, isLang, loadLang, translator, type I18n, type Lang, type MessageKey } from './i18n';
import { ToastProvider } from './ui/toast';
import { LoginPage } from './auth/login-page';
import { SetupPage } from './auth/setup-page';
import { SessionContext, type Session } from './auth/session';
import { Shell } from './shell';
import { navigate, usePathname } from './lib/router';
import { adoptPairingLink, deviceKey, forgetDeviceKey } from './device/device-key';
import { withoutBase } from './lib/base';

const SignupPage = lazy(() => import('./auth/signup-page'));
/** Pages of the signed-out app that mean nothing once signed in. */
const SIGNED_OUT_ONLY = new Set(['/login', '/signup', '/pair']);

type Boot = { kind: 'loading' } | { kind: 'setup'; local: boolean; suggestedPath?: string } | { kind: 'signed-out' } | { kind: 'signed-in'; user: User };

export function App() {
  // A language pack's strings arrive after the first paint: English until then.
  const [lang, setLangState] = useState<Lang>(() => (isLang(initialLang()) ? initialLang() : 'en'));
  const [boot, setBoot] = useState<Boot>({ kind: 'loading' });
  const [notice, setNotice] = useState<MessageKey | null>(null);
  const path = usePathname();

  const adopt = useCallback((user: User) => {
    if (user.language) void loadLang(user.language).then((ok) => ok && setLangState(user.language!));
    // A refused single sign-on lands on /login, a new account on /signup: no screens of the signed-in shell.
    if (SIGNED_OUT_ONLY.has(withoutBase(location.pathname))) navigate('/', true);
    setBoot({ kind: 'signed-in', user });
  }, []);

  useEffect(() => {
    /** A paired device's key was refused (revoked or expired): forget it and say why. */
    const keyGone = () => {
      if (!deviceKey()) return;
      forgetDeviceKey();
      setNotice('device.key_gone');
    };
    setUnauthenticatedHandler(() => {
      keyGone();
      setBoot({ kind: 'signed-out' });
    });
    (async () => {
      if (adoptPairingLink() === 'bad') setNotice('device.bad_link');
      // A key cannot ask for first-run setup (that route needs a browser session).
      if (!deviceKey())
        try {
          const setup = await api<{ needed: boolean; local: boolean; storage?: { suggested_path: string } }>('/api/auth/setup', { quiet401: true });
          if (setup?.needed) return setBoot({ kind: 'setup', local: setup.local, suggestedPath: setup.storage?.suggested_path });
        } catch {
          // An older server without the setup route: go on to the session check.
        }
      try {
        adopt((await api<{ user: User }>('/api/auth/me', { quiet401: true })).user);
      } catch (e) {
        if (e instanceof ApiError && e.status === 401) keyGone();
        setBoot({ kind: 'signed-out' });
      }
    })();
    return () => setUnauthenticatedHandler(null);
  }, [adopt]);

  useEffect(() => {
    const wanted = initialLang();
    if (!isLang(wanted)) void loadLang(wanted).then((ok) => ok && setLangState(wanted));
  }, []);

  useEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);

  const signedIn = boot.kind === 'signed-in';
  const i18n = useMemo<I18n>(
    () => ({
      lang,
      t: translator(lang),
      setLang: (l) => {
        // A pack's strings are fetched first; one the server no longer has leaves the language as it was.
        void loadLang(l).then((ok) => {
          if (!ok) return;
          setLangState(l);
          localStorage.setItem('filedock.lang', l);
          // The account keeps the choice so server sentences (errors, mails) follow it; a paired device's key may not change the account.
          if (signedIn && !deviceKey()) void api('/api/auth/me', { method: 'PATCH', body: { language: l } }).catch(() => {});
        });
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
        {boot.kind === 'loading' && (
          <p className="boot" aria-busy="true">
            {i18n.t('common.loading')}
          </p>
        )}
        {boot.kind === 'setup' && <SetupPage local={boot.local} suggestedPath={boot.suggestedPath} onDone={adopt} />}
        {boot.kind === 'signed-out' &&
          (path === '/signup' ? (
            <Suspense
              fallback={
                <p className="boot" aria-busy="true">
                  {i18n.t('common.loading')}
                </p>
              }
            >
              <SignupPage onSignedIn={adopt} />
            </Suspense>
          ) : (
            <LoginPage onSignedIn={adopt} notice={notice && i18n.t(notice)} />
          ))}
        {session && (
          <SessionContext.Provider value={session}>
            <Shell />
          </SessionContext.Provider>
        )}
      </ToastProvider>
    </I18nContext.Provider>
  );
}
