/**
 * The passphrase prompt that `requestUnlock()` opens (VaultHost shows it).
 * Argon2id takes about half a second, so the button says what is happening;
 * a wrong passphrase keeps the dialog open with the reason.
 */
import { useState } from 'react';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { FormFooter } from '../ui/forms';
import { linkClick } from '../lib/router';
import { cancelUnlock, unlock } from './vault-store';
import { vaultErrorText } from './vault-words';

export function UnlockDialog() {
  const { t } = useI18n();
  const [pass, setPass] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await unlock(pass);
    } catch (err) {
      setError(vaultErrorText(err, t));
      setBusy(false);
    }
  };
  return (
    <Dialog title={t('vault.unlock.title')} onClose={cancelUnlock}>
      <form className="form" onSubmit={submit} data-testid="vault-unlock">
        <p>{t('vault.unlock.text')}</p>
        <label>
          {t('vault.passphrase')}
          <input type="password" autoComplete="current-password" required value={pass} onChange={(e) => setPass(e.target.value)} />
        </label>
        {busy && (
          <p className="hint" role="status">
            <progress aria-label={t('vault.deriving')} /> {t('vault.deriving')}
          </p>
        )}
        <p className="hint">
          <a href="/account/vault" onClick={(e) => (cancelUnlock(), linkClick(e))}>
            {t('vault.forgot')}
          </a>
        </p>
        <FormFooter error={error} disabled={busy || !pass} submitLabel={t('vault.unlock')} onCancel={cancelUnlock} />
      </form>
    </Dialog>
  );
}
