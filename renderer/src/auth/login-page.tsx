/** Sign-in with the server's sentence for each refusal, tries left, and a live lockout countdown. */
import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../api/client';
import type { User } from '../api/types';
import { useI18n } from '../i18n';
import { errorText } from '../ui/toast';
import { useCountdown } from './countdown';
import { PublicFrame } from './public-frame';
import { SsoButton, useSsoError } from './sso';

export function LoginPage({ onSignedIn }: { onSignedIn: (u: User) => void }) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const ssoError = useSsoError();
  const [error, setError] = useState<string | null>(ssoError);
  const [lockedUntil, setLockedUntil] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);
  const left = useCountdown(lockedUntil);
  const locked = left > 0;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await api<{ user: User }>('/api/auth/login', { body: { email, password }, quiet401: true });
      onSignedIn(r.user);
    } catch (err) {
      setPassword('');
      if (err instanceof ApiError && err.status === 429) {
        const s = err.retryAfter ?? Number(err.params.retry_after ?? 60);
        setLockedUntil(Date.now() + s * 1000);
        setError(null);
      } else {
        // The server's sentence already carries the tries left.
        setError(errorText(err, t));
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <PublicFrame title={t('auth.title')}>
      <form className="form" onSubmit={submit} aria-describedby="login-status">
        <label>
          {t('auth.email')}
          <input autoFocus autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label>
          {t('auth.password')}
          <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <div id="login-status" aria-live="assertive">
          {error && <p className="error">{error}</p>}
          {locked && <p className="error" data-testid="lockout">{t('auth.locked', { s: left })}</p>}
        </div>
        <button type="submit" className="primary" disabled={busy || locked}>
          {t('auth.submit')}
        </button>
      </form>
      <SsoButton />
    </PublicFrame>
  );
}
