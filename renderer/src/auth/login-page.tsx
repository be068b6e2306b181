/**
 * Sign-in with the server's sentence for each refusal, tries left, and a live
 * lockout countdown. An account with a second factor answers the password
 * with a challenge: the second step takes over until it signs in or starts over.
 */
import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import type { MfaChallenge, User } from '../api/types';
import { useI18n } from '../i18n';
import { errorText } from '../ui/toast';
import { useLockout } from './countdown';
import { isChallenge } from './mfa-api';
import { PublicFrame } from './public-frame';
import { SsoButton, useSsoError } from './sso';
import { useSignInOptions } from './sign-in-options';
import { linkClick } from '../lib/router';
import { withBase } from '../lib/base';
import { SecondStep } from './second-step';

/** `notice`: why the person is here (a paired device's key stopped working), shown until the next attempt. */
export function LoginPage({ onSignedIn, notice }: { onSignedIn: (u: User) => void; notice?: string | null }) {
  const { t } = useI18n();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const ssoError = useSsoError();
  const [error, setError] = useState<string | null>(notice ?? ssoError);
  const options = useSignInOptions();
  const [challenge, setChallenge] = useState<MfaChallenge | null>(null);
  const [busy, setBusy] = useState(false);
  const { left, lockedBy } = useLockout();
  const locked = left > 0;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await api<MfaChallenge | { user: User }>('/api/auth/login', { body: { email, password }, quiet401: true });
      setPassword('');
      if (isChallenge(r)) setChallenge(r);
      else onSignedIn(r.user);
    } catch (err) {
      setPassword('');
      // The server's sentence already carries the tries left.
      if (!lockedBy(err)) setError(errorText(err, t));
    } finally {
      setBusy(false);
    }
  };

  if (challenge)
    return (
      <PublicFrame title={t('mfa.title')}>
        <SecondStep
          challenge={challenge}
          onSignedIn={onSignedIn}
          onRestart={(why) => {
            setChallenge(null);
            setError(why);
          }}
        />
      </PublicFrame>
    );

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
          {locked && (
            <p className="error" data-testid="lockout">
              {t('auth.locked', { s: left })}
            </p>
          )}
        </div>
        <button type="submit" className="primary" disabled={busy || locked}>
          {t('auth.submit')}
        </button>
      </form>
      <SsoButton options={options} />
      {options?.allow_signup && (
        <p className="signup-link">
          {t('signup.prompt')}{' '}
          <a href={withBase('/signup')} onClick={linkClick}>
            {t('signup.title')}
          </a>
        </p>
      )}
    </PublicFrame>
  );
}
