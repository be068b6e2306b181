/** Small dialogs every feature uses: ask for a name, confirm a step. */
import { useState } from 'react';
import { Dialog } from './dialog';
import { useI18n } from '../i18n';
import { useSubmit } from './use-submit';

interface NameProps {
  title: string;
  label: string;
  initial?: string;
  submitLabel: string;
  /** Rejections are shown inside the dialog (the envelope's message) and keep it open. */
  onSubmit: (name: string) => Promise<void>;
  onClose: () => void;
}

/** A one-field form; the extension of `initial` is left unselected so a rename keeps it by default. */
export function NameDialog({ title, label, initial = '', submitLabel, onSubmit, onClose }: NameProps) {
  const { t } = useI18n();
  const [name, setName] = useState(initial);
  const { submit, busy, error } = useSubmit(async () => {
    await onSubmit(name.trim());
    onClose();
  });
  return (
    <Dialog title={title} onClose={onClose}>
      <form onSubmit={submit} className="form">
        <label>
          {label}
          <input
            autoFocus
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
            onFocus={(e) => {
              const dot = initial.lastIndexOf('.');
              e.target.setSelectionRange(0, dot > 0 ? dot : initial.length);
            }}
          />
        </label>
        {error && <p className="error" role="alert">{error}</p>}
        <div className="actions">
          <button type="button" onClick={onClose}>{t('common.cancel')}</button>
          <button type="submit" className="primary" disabled={busy || !name.trim()}>{submitLabel}</button>
        </div>
      </form>
    </Dialog>
  );
}

interface ConfirmProps {
  title: string;
  text: string;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => void;
  onClose: () => void;
}

export function ConfirmDialog({ title, text, confirmLabel, danger, onConfirm, onClose }: ConfirmProps) {
  const { t } = useI18n();
  return (
    <Dialog title={title} onClose={onClose}>
      <p>{text}</p>
      <div className="actions">
        <button type="button" autoFocus onClick={onClose}>{t('common.cancel')}</button>
        <button type="button" className={danger ? 'danger' : 'primary'} onClick={() => { onConfirm(); onClose(); }}>
          {confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
