/**
 * Sign-up (`/signup`, offered on the sign-in page only while the admin allows
 * it): e-mail, an optional username and a password. The server's refusals
 * land under the field they name; too many attempts start the same live
 * countdown as sign-in. Success signs the new account in.
 */
import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../api/client';
import type { User } from '../api/types';
import { useI18n, type Translate } from '../i18n';
import { linkClick } from '../lib/router';
import { withBase } from '../lib/base';
import { errorText } from '../ui/toast';
import { useLockout } from './countdown';
import { PublicFrame } from './public-frame';
import { useSignInOptions } from './sign-in-options';

type Field = 'email' | 'username' | 'password';
type Problems = Partial<Record<Field | 'form', string>>;

/** Where a refusal belongs: the field its code or `details.field` names, else the whole form. */
export function signupProblem(err: unknown, t: Translate): Problems {
  if (err instanceof ApiError) {
    if (err.code.startsWith('email_')) return { email: err.message };
    if (err.code.startsWith('username_')) return { username: err.message };
    if (err.code === 'validation_failed') {
      const f = err.details.field;
      if (f === 'password') return { password: t('signup.password_rule') };
      if (f === 'email' || f === 'username') return { [f]: err.message };
    }
    if (err.status === 403) return { form: t('signup.off') };
  }
  return { form: errorText(err, t) };
}

export default function SignupPage({ onSignedIn }: { onSignedIn: (u: User) => void }) {
  const { t, lang } = useI18n();
  const options = useSignInOptions();
  const [f, setF] = useState({ email: '', username: '', password: '' });
  const [problems, setProblems] = useState<Problems>({});
  const [busy, setBusy] = useState(false);
  const { left, lockedBy } = useLockout();
  const locked = left > 0;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setProblems({});
    try {
      const body = { email: f.email.trim(), password: f.password, language: lang, ...(f.username.trim() ? { username: f.username.trim() } : {}) };
      onSignedIn((await api<{ user: User }>('/api/auth/signup', { body, quiet401: true })).user);
    } catch (err) {
      if (!lockedBy(err)) setProblems(signupProblem(err, t));
    } finally {
      setBusy(false);
    }
  };

  // The note sits outside the <label> so it is the field's description, not part of its name.
  const field = (k: Field, label: string, input: React.InputHTMLAttributes<HTMLInputElement>, hint?: string) => (
    <div className="field">
      <label htmlFor={`signup-${k}`}>{label}</label>
      <input
        id={`signup-${k}`}
        {...input}
        value={f[k]}
        onChange={(e) => setF({ ...f, [k]: e.target.value })}
        aria-invalid={problems[k] ? true : undefined}
        aria-describedby={`signup-${k}-note`}
      />
      <span id={`signup-${k}-note`} className={problems[k] ? 'error' : 'hint'} data-testid={`signup-${k}-note`}>
        {problems[k] ?? hint}
      </span>
    </div>
  );

  return (
    <PublicFrame title={t('signup.title')}>
      {options && !options.allow_signup ? (
        <p className="error">{t('signup.off')}</p>
      ) : (
        <form className="form" onSubmit={submit} noValidate>
          {field('email', t('setup.email'), { type: 'email', autoComplete: 'email', required: true, autoFocus: true })}
          {field('username', t('signup.username'), { autoComplete: 'username', maxLength: 64 }, t('signup.username_hint'))}
          {field('password', t('setup.password'), { type: 'password', autoComplete: 'new-password', required: true }, t('signup.password_rule'))}
          <div aria-live="assertive">
            {problems.form && <p className="error">{problems.form}</p>}
            {locked && (
              <p className="error" data-testid="lockout">
                {t('auth.locked', { s: left })}
              </p>
            )}
          </div>
          <button type="submit" className="primary" disabled={busy || locked}>
            {t('signup.submit')}
          </button>
        </form>
      )}
      <p className="signup-link">
        {t('signup.have_account')}{' '}
        <a href={withBase('/')} onClick={linkClick}>
          {t('auth.submit')}
        </a>
      </p>
    </PublicFrame>
  );
}
