/**
 * First-run page: creates the administrator (the server allows it only from
 * loopback clients) and, when no storage exists yet, a first storage: a folder
 * on this computer, prefilled with the server's suggestion (`~/Filedock` of the
 * service's user; the browser cannot know that home).
 */
import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import type { User } from '../api/types';
import { useI18n } from '../i18n';
import { errorText } from '../ui/toast';
import { PublicFrame } from './public-frame';

export function SetupPage({ local, suggestedPath, onDone }: { local: boolean; suggestedPath?: string; onDone: (u: User) => void }) {
  const { t } = useI18n();
  const [f, setF] = useState({ email: '', username: '', password: '', password2: '', storage: suggestedPath ?? '' });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (k: keyof typeof f) => (e: React.ChangeEvent<HTMLInputElement>) => setF({ ...f, [k]: e.target.value });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (f.password !== f.password2) return setError(t('setup.mismatch'));
    setBusy(true);
    setError(null);
    try {
      const r = await api<{ user: User }>('/api/auth/setup', {
        body: { email: f.email, username: f.username, password: f.password, ...(suggestedPath !== undefined && { storage_path: f.storage }) },
        quiet401: true,
      });
      onDone(r.user);
    } catch (err) {
      setError(errorText(err, t));
    } finally {
      setBusy(false);
    }
  };

  return (
    <PublicFrame title={t('setup.title')}>
      {!local ? (
        <p className="error">{t('setup.remote')}</p>
      ) : (
        <form className="form" onSubmit={submit}>
          <p>{t('setup.intro')}</p>
          <label>
            {t('setup.email')}
            <input type="email" autoComplete="email" required autoFocus value={f.email} onChange={set('email')} />
          </label>
          <label>
            {t('setup.username')}
            <input autoComplete="username" required value={f.username} onChange={set('username')} />
          </label>
          <label>
            {t('setup.password')}
            <input type="password" autoComplete="new-password" required minLength={8} value={f.password} onChange={set('password')} />
          </label>
          <label>
            {t('setup.password2')}
            <input type="password" autoComplete="new-password" required value={f.password2} onChange={set('password2')} />
          </label>
          {suggestedPath !== undefined && (
            <fieldset className="first-storage">
              <legend>{t('setup.storage')}</legend>
              <label>
                {t('setup.storage_path')}
                <input value={f.storage} onChange={set('storage')} spellCheck={false} autoCapitalize="off" aria-describedby="setup-storage-hint" />
              </label>
              <p className="hint" id="setup-storage-hint">
                {t('setup.storage_hint')}
              </p>
            </fieldset>
          )}
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          <button type="submit" className="primary" disabled={busy}>
            {t('setup.submit')}
          </button>
        </form>
      )}
    </PublicFrame>
  );
}
