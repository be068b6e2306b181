/**
 * The sign-in's second step: a code from the authenticator app, or a
 * recovery code, or the browser's passkey prompt, whichever the account has.
 * Wrong codes show the server's sentence (tries left); a lock shows the
 * countdown; an expired or finished challenge sends the person back to the
 * password with a word why.
 */
import { useState, type FormEvent } from 'react';
import { ApiError } from '../api/client';
import type { MfaChallenge, User } from '../api/types';
import { useI18n } from '../i18n';
import { errorText } from '../ui/toast';
import { useLockout } from './countdown';
import { passkeysHere, secondStep } from './mfa-api';

type Mode = 'totp' | 'recovery';

interface Props {
  challenge: MfaChallenge;
  onSignedIn: (u: User) => void;
  /** Back to the password form, with the sentence to show there (null: the person chose to). */
  onRestart: (why: string | null) => void;
}

export function SecondStep({ challenge, onSignedIn, onRestart }: Props) {
  const { t } = useI18n();
  const has = (m: string) => challenge.methods.includes(m as never);
  const [mode, setMode] = useState<Mode>(has('totp') ? 'totp' : 'recovery');
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const { left, lockedBy } = useLockout();
  const locked = left > 0;
  const canPasskey = has('passkey') && passkeysHere();
  const codeMode = has('totp') || has('recovery');

  const run = async (answer: Parameters<typeof secondStep>[1]) => {
    setBusy(true);
    setError(null);
    try {
      onSignedIn((await secondStep(challenge, answer)).user);
    } catch (err) {
      setCode('');
      if (err instanceof ApiError && err.code === 'mfa_expired') onRestart(errorText(err, t));
      else if (err instanceof DOMException) setError(t('mfa.passkey_cancelled'));
      else if (!lockedBy(err)) setError(errorText(err, t));
    } finally {
      setBusy(false);
    }
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(mode === 'totp' ? { totp: code } : { recovery_code: code });
  };
  const other: Mode = mode === 'totp' ? 'recovery' : 'totp';

  return (
    <div className="second-step">
      {codeMode && (
        <form className="form" onSubmit={submit} aria-describedby="mfa-status">
          <label>
            {t(mode === 'totp' ? 'mfa.code' : 'mfa.recovery_code')}
            {mode === 'totp' ? (
              <input
                key="totp"
                autoFocus
                required
                inputMode="numeric"
                autoComplete="one-time-code"
                pattern="[0-9 ]{6,7}"
                maxLength={7}
                value={code}
                onChange={(e) => setCode(e.target.value)}
              />
            ) : (
              <input
                key="recovery"
                autoFocus
                required
                autoComplete="off"
                spellCheck={false}
                maxLength={40}
                value={code}
                onChange={(e) => setCode(e.target.value)}
              />
            )}
          </label>
          <button type="submit" className="primary" disabled={busy || locked}>
            {t('mfa.verify')}
          </button>
        </form>
      )}
      <div id="mfa-status" aria-live="assertive">
        {error && <p className="error">{error}</p>}
        {locked && (
          <p className="error" data-testid="lockout">
            {t('auth.locked', { s: left })}
          </p>
        )}
      </div>
      <div className="alt-methods">
        {has(other) && (
          <button
            type="button"
            className="link"
            onClick={() => {
              setMode(other);
              setCode('');
              setError(null);
            }}
          >
            {t(other === 'recovery' ? 'mfa.use_recovery' : 'mfa.use_app')}
          </button>
        )}
        {has('passkey') && (
          <button type="button" className={codeMode ? 'link' : 'primary'} disabled={busy || locked || !canPasskey} onClick={() => void run('passkey')}>
            {t('mfa.use_passkey')}
          </button>
        )}
        {has('passkey') && !canPasskey && <p className="hint">{t('mfa.passkey_not_here')}</p>}
        <button type="button" className="link" onClick={() => onRestart(null)}>
          {t('mfa.start_over')}
        </button>
      </div>
    </div>
  );
}
