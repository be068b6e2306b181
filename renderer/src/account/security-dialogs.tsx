/**
 * The dialogs of the "Account security" page: the password re-entry every
 * change starts with, TOTP enrolment (QR and manual key, then a code), adding
 * a passkey, and the recovery codes shown once (copy or download).
 */
import { useState } from 'react';
import { ApiError } from '../api/client';
import type { TotpSetup } from '../api/types';
import { useI18n, type Translate } from '../i18n';
import { Dialog } from '../ui/dialog';
import { FormFooter } from '../ui/forms';
import { errorText } from '../ui/toast';
import { useSubmit } from '../ui/use-submit';
import * as mfa from '../auth/mfa-api';

/** The server's sentence, except a wrong re-entered password, which gets words of its own. */
export function securityError(err: unknown, t: Translate): Error {
  if (err instanceof ApiError && err.code === 'validation_failed' && err.details.field === 'current_password') return new Error(t('security.wrong_password'));
  if (err instanceof DOMException) return new Error(t('mfa.passkey_cancelled'));
  return new Error(errorText(err, t));
}

/** Runs `action`, rethrowing its failure in the page's words (see securityError). */
function useSecuritySubmit(action: () => Promise<void>) {
  const { t } = useI18n();
  return useSubmit(() => action().catch((e) => Promise.reject(securityError(e, t))));
}

function PasswordField({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const { t } = useI18n();
  return (
    <label>
      {t('security.current_password')}
      <input type="password" autoComplete="current-password" required value={value} onChange={(e) => onChange(e.target.value)} />
    </label>
  );
}

interface PasswordProps {
  title: string;
  text: string;
  submitLabel: string;
  onSubmit: (password: string) => Promise<void>;
  onClose: () => void;
}

/**
 * Asks for the current password before a change. On success `onSubmit`
 * decides what comes next (close, or show what the change answered); on
 * failure the dialog stays open with the reason.
 */
export function PasswordDialog({ title, text, submitLabel, onSubmit, onClose }: PasswordProps) {
  const [pw, setPw] = useState('');
  const { submit, busy, error } = useSecuritySubmit(() => onSubmit(pw));
  return (
    <Dialog title={title} onClose={onClose}>
      <form className="form" onSubmit={submit}>
        <p>{text}</p>
        <PasswordField value={pw} onChange={setPw} />
        <FormFooter error={error} disabled={busy || !pw} submitLabel={submitLabel} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

/** Password, then the QR code and manual key, then the first code; hands the recovery codes on. */
export function TotpDialog({ onCodes, onClose }: { onCodes: (codes: string[]) => void; onClose: () => void }) {
  const { t } = useI18n();
  const [pw, setPw] = useState('');
  const [setup, setSetup] = useState<TotpSetup | null>(null);
  const [code, setCode] = useState('');
  const start = useSecuritySubmit(async () => setSetup(await mfa.totpSetup(pw)));
  const confirm = useSecuritySubmit(async () => onCodes((await mfa.totpConfirm(code)).recovery_codes));
  return (
    <Dialog title={t('security.totp.setup')} onClose={onClose}>
      {!setup ? (
        <form className="form" onSubmit={start.submit}>
          <p>{t('security.totp.intro')}</p>
          <PasswordField value={pw} onChange={setPw} />
          <FormFooter error={start.error} disabled={start.busy || !pw} submitLabel={t('security.continue')} onCancel={onClose} />
        </form>
      ) : (
        <form className="form" onSubmit={confirm.submit}>
          <p>{t('security.totp.scan')}</p>
          <img className="qr" src={setup.qr} width={240} height={240} alt={t('security.totp.qr')} />
          <p>
            {t('security.totp.manual')}{' '}
            <code className="secret" data-testid="totp-secret">
              {setup.secret.replace(/(.{4})/g, '$1 ').trim()}
            </code>
          </p>
          <label>
            {t('security.totp.code')}
            <input
              data-autofocus
              required
              inputMode="numeric"
              autoComplete="one-time-code"
              maxLength={7}
              value={code}
              onChange={(e) => setCode(e.target.value)}
            />
          </label>
          <FormFooter error={confirm.error} disabled={confirm.busy || !code.trim()} submitLabel={t('security.totp.activate')} onCancel={onClose} />
        </form>
      )}
    </Dialog>
  );
}

/** A name and the password, then the browser's passkey prompt. */
export function PasskeyDialog({ onAdded, onClose }: { onAdded: (codes?: string[]) => void; onClose: () => void }) {
  const { t } = useI18n();
  const [name, setName] = useState('');
  const [pw, setPw] = useState('');
  const { submit, busy, error } = useSecuritySubmit(async () => onAdded((await mfa.addPasskey(pw, name.trim())).recovery_codes));
  return (
    <Dialog title={t('security.passkey.add')} onClose={onClose}>
      <form className="form" onSubmit={submit}>
        <p>{t('security.passkey.intro')}</p>
        <label>
          {t('security.passkey.name')}
          <input data-autofocus required maxLength={100} placeholder={t('security.passkey.name_hint')} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <PasswordField value={pw} onChange={setPw} />
        <FormFooter error={error} disabled={busy || !pw || !name.trim()} submitLabel={t('security.passkey.create')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

/** The new recovery codes, shown this once, with copy and download. */
export function CodesDialog({ codes, onClose }: { codes: string[]; onClose: () => void }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  const text = codes.join('\n') + '\n';
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      // Plain-HTTP pages have no async clipboard: select the list so Ctrl+C works.
      const list = document.getElementById('recovery-codes');
      if (list) window.getSelection()?.selectAllChildren(list);
    }
  };
  const download = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const a = Object.assign(document.createElement('a'), { href: url, download: 'filedock-recovery-codes.txt' });
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <Dialog title={t('security.codes.title')} onClose={onClose}>
      <p role="alert">{t('security.codes.once')}</p>
      <ol className="codes" id="recovery-codes" data-testid="recovery-codes">
        {codes.map((c) => (
          <li key={c}>
            <code>{c}</code>
          </li>
        ))}
      </ol>
      <div className="actions">
        <button type="button" onClick={() => void copy()}>
          {copied ? t('common.copied') : t('common.copy')}
        </button>
        <button type="button" onClick={download}>
          {t('files.download')}
        </button>
        <button type="button" className="primary" data-autofocus onClick={onClose}>
          {t('security.codes.saved')}
        </button>
      </div>
    </Dialog>
  );
}
