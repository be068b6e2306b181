/**
 * The recovery key, shown this once after the vault is made: copy it or save
 * it as a text file, and confirm it is kept before going on. The server holds
 * only a proof of it; lost together with the passphrase, the files stay closed.
 */
import { useState } from 'react';
import { useI18n } from '../i18n';

export const RECOVERY_FILE = 'filedock-vault-recovery-key.txt';

export function RecoveryKey({ value, onDone }: { value: string; onDone: () => void }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  const [saved, setSaved] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
    } catch {
      // Plain-HTTP pages have no async clipboard: select the key so Ctrl+C works.
      const el = document.getElementById('vault-recovery-key');
      if (el) window.getSelection()?.selectAllChildren(el);
    }
  };
  const download = () => {
    const text = `${t('vault.recovery.file_head')}\n\n${value}\n`;
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const a = Object.assign(document.createElement('a'), { href: url, download: RECOVERY_FILE });
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <div className="form recovery" data-testid="vault-recovery">
      <h3>{t('vault.recovery.title')}</h3>
      <p role="alert">{t('vault.recovery.once')}</p>
      <p>
        <code className="secret" id="vault-recovery-key" data-testid="recovery-key">
          {value}
        </code>
      </p>
      <div className="actions start">
        <button type="button" onClick={() => void copy()}>
          {copied ? t('common.copied') : t('common.copy')}
        </button>
        <button type="button" onClick={download}>
          {t('vault.recovery.download')}
        </button>
      </div>
      <label className="check">
        <input type="checkbox" checked={saved} onChange={(e) => setSaved(e.target.checked)} /> {t('vault.recovery.saved')}
      </label>
      <div className="actions start">
        <button type="button" className="primary" disabled={!saved} onClick={onDone}>
          {t('vault.recovery.continue')}
        </button>
      </div>
    </div>
  );
}
