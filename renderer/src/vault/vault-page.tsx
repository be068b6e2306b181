/**
 * Account → Vault (`/account/vault`): set up (passphrase twice, a strength
 * hint, then the recovery key shown once), unlock and lock, change the
 * passphrase, reset it with the recovery key, and what the server still sees.
 */
import { useState, type FormEvent, type ReactNode } from 'react';
import './vault.css';
import { useI18n } from '../i18n';
import { FormFooter } from '../ui/forms';
import { useToast } from '../ui/toast';
import { RecoveryKey } from './recovery-key';
import { MIN_PASSPHRASE, strengthOf } from './strength';
import { changePassphrase, lock, requestUnlock, resetWithRecovery, setUp, useVault } from './vault-store';
import { isCancelled, vaultErrorText } from './vault-words';

export default function VaultPage() {
  const { t } = useI18n();
  const toast = useToast();
  const vault = useVault();
  const [recoveryKey, setRecoveryKey] = useState<string | null>(null);
  const [form, setForm] = useState<'change' | 'recover' | null>(null);
  const done = (text: string) => {
    setForm(null);
    toast.info(text);
  };
  return (
    <section className="vault-page" aria-labelledby="vault-title">
      <h2 id="vault-title">{t('vault.title')}</h2>
      <p>{t('vault.intro')}</p>
      {recoveryKey ? (
        <RecoveryKey value={recoveryKey} onDone={() => setRecoveryKey(null)} />
      ) : !vault.loaded ? (
        <p aria-busy="true">{t('common.loading')}</p>
      ) : vault.state === 'none' ? (
        <SetUpForm onMade={setRecoveryKey} />
      ) : (
        <>
          <p className="vault-state" role="status" data-state={vault.state}>
            {t(vault.state === 'unlocked' ? 'vault.state.unlocked' : 'vault.state.locked')}
          </p>
          <div className="actions start">
            {vault.state === 'unlocked' ? (
              <button type="button" onClick={lock}>
                {t('vault.lock')}
              </button>
            ) : (
              <button type="button" className="primary" onClick={() => void requestUnlock().catch((e) => isCancelled(e) || toast.error(e))}>
                {t('vault.unlock')}
              </button>
            )}
            <button type="button" onClick={() => setForm('change')} aria-expanded={form === 'change'}>
              {t('vault.change')}
            </button>
            <button type="button" onClick={() => setForm('recover')} aria-expanded={form === 'recover'}>
              {t('vault.forgot')}
            </button>
          </div>
          {form === 'change' && <ChangeForm onDone={() => done(t('vault.changed'))} onCancel={() => setForm(null)} />}
          {form === 'recover' && <RecoverForm onDone={() => done(t('vault.recovered'))} onCancel={() => setForm(null)} />}
        </>
      )}
      <h3>{t('vault.limits.title')}</h3>
      <ul className="vault-limits">
        <li>{t('vault.limits.sizes')}</li>
        <li>{t('vault.limits.shape')}</li>
        <li>{t('vault.limits.people')}</li>
        <li>{t('vault.limits.names')}</li>
        <li>{t('vault.limits.removed')}</li>
        <li>{t('vault.limits.lost')}</li>
      </ul>
    </section>
  );
}

/** Busy/error state for a form whose work includes Argon2id (about half a second): the progress says so. */
function useVaultSubmit(action: () => Promise<void>) {
  const { t } = useI18n();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(vaultErrorText(err, t));
    } finally {
      setBusy(false);
    }
  };
  const progress = busy ? (
    <p className="hint" role="status">
      <progress aria-label={t('vault.deriving')} /> {t('vault.deriving')}
    </p>
  ) : null;
  return { submit, busy, error, progress };
}

/** A new passphrase typed twice, with the strength hint; `ok` once both match and it is long enough. */
function NewPassphrase({ value, onChange }: { value: [string, string]; onChange: (v: [string, string]) => void }) {
  const { t } = useI18n();
  const [a, b] = value;
  const strength = strengthOf(a);
  return (
    <>
      <label>
        {t('vault.new_passphrase')}
        <input type="password" autoComplete="new-password" required minLength={MIN_PASSPHRASE} value={a} onChange={(e) => onChange([e.target.value, b])} />
      </label>
      {a && (
        <p className={`strength ${strength}`} data-testid="strength" aria-live="polite">
          <meter min={0} max={3} value={['weak', 'fair', 'good', 'strong'].indexOf(strength)} aria-hidden="true" /> {t(`vault.strength.${strength}`)}
        </p>
      )}
      <label>
        {t('vault.repeat_passphrase')}
        <input type="password" autoComplete="new-password" required value={b} onChange={(e) => onChange([a, e.target.value])} />
      </label>
      {b && a !== b && <p className="hint">{t('vault.mismatch')}</p>}
    </>
  );
}

const acceptable = ([a, b]: [string, string]) => a.length >= MIN_PASSPHRASE && a === b;

function SetUpForm({ onMade }: { onMade: (recoveryKey: string) => void }) {
  const { t } = useI18n();
  const [pass, setPass] = useState<[string, string]>(['', '']);
  const { submit, busy, error, progress } = useVaultSubmit(async () => onMade(await setUp(pass[0])));
  return (
    <form className="form" onSubmit={submit} data-testid="vault-setup">
      <h3>{t('vault.setup')}</h3>
      <p>{t('vault.setup.text', { n: MIN_PASSPHRASE })}</p>
      <NewPassphrase value={pass} onChange={setPass} />
      {progress}
      <Footer error={error} disabled={busy || !acceptable(pass)} label={t('vault.setup.create')} />
    </form>
  );
}

function ChangeForm({ onDone, onCancel }: { onDone: () => void; onCancel: () => void }) {
  const { t } = useI18n();
  const [old, setOld] = useState('');
  const [pass, setPass] = useState<[string, string]>(['', '']);
  const { submit, busy, error, progress } = useVaultSubmit(async () => {
    await changePassphrase(old, pass[0]);
    onDone();
  });
  return (
    <form className="form" onSubmit={submit} data-testid="vault-change">
      <h3>{t('vault.change')}</h3>
      <label>
        {t('vault.current_passphrase')}
        <input type="password" autoComplete="current-password" required value={old} onChange={(e) => setOld(e.target.value)} />
      </label>
      <NewPassphrase value={pass} onChange={setPass} />
      {progress}
      <Footer error={error} disabled={busy || !old || !acceptable(pass)} label={t('vault.change')} onCancel={onCancel} />
    </form>
  );
}

function RecoverForm({ onDone, onCancel }: { onDone: () => void; onCancel: () => void }) {
  const { t } = useI18n();
  const [key, setKey] = useState('');
  const [pass, setPass] = useState<[string, string]>(['', '']);
  const { submit, busy, error, progress } = useVaultSubmit(async () => {
    await resetWithRecovery(key, pass[0]);
    onDone();
  });
  return (
    <form className="form" onSubmit={submit} data-testid="vault-recover">
      <h3>{t('vault.recover.title')}</h3>
      <p>{t('vault.recover.text')}</p>
      <label>
        {t('vault.recovery_key')}
        <textarea required rows={2} spellCheck={false} autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} />
      </label>
      <NewPassphrase value={pass} onChange={setPass} />
      {progress}
      <Footer error={error} disabled={busy || !key.trim() || !acceptable(pass)} label={t('vault.recover.submit')} onCancel={onCancel} />
    </form>
  );
}

function Footer({ error, disabled, label, onCancel }: { error: string | null; disabled: boolean; label: string; onCancel?: () => void }): ReactNode {
  if (onCancel) return <FormFooter error={error} disabled={disabled} submitLabel={label} onCancel={onCancel} />;
  return (
    <>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="actions start">
        <button type="submit" className="primary" disabled={disabled}>
          {label}
        </button>
      </div>
    </>
  );
}
