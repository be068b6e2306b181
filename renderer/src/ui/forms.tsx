/** Small dialogs every feature uses: ask for a name, confirm a step. */
import { useState } from 'react';
import { Dialog } from './dialog';
import { useI18n } from '../i18n';
import { useSubmit } from './use-submit';

interface NameProps {
  title: string;
  label: string;
  initial?: string;
  /** Pre-select the name without its extension (rename); otherwise the whole text is selected. */
  keepExtension?: boolean;
  submitLabel: string;
  /** Rejections are shown inside the dialog (the envelope's message) and keep it open. */
  onSubmit: (name: string) => Promise<void>;
  onClose: () => void;
}

/** A one-field form, focused on open; with `keepExtension` the extension of `initial` is left unselected so typing keeps it. */
export function NameDialog({ title, label, initial = '', keepExtension, submitLabel, onSubmit, onClose }: NameProps) {
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
            data-autofocus
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
            onFocus={(e) => {
              const dot = keepExtension ? initial.lastIndexOf('.') : -1;
              e.target.setSelectionRange(0, dot > 0 ? dot : e.target.value.length);
            }}
          />
        </label>
        <FormFooter error={error} disabled={busy || !name.trim()} submitLabel={submitLabel} onCancel={onClose} />
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
        <button type="button" data-autofocus onClick={onClose}>
          {t('common.cancel')}
        </button>
        <button
          type="button"
          className={danger ? 'danger' : 'primary'}
          onClick={() => {
            onConfirm();
            onClose();
          }}
        >
          {confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}

/** The end of every dialog form: the envelope's message when the last submit failed, then Cancel and the submit button. */
export function FormFooter({
  error,
  disabled,
  submitLabel,
  onCancel,
}: {
  error: string | null;
  disabled?: boolean;
  submitLabel: string;
  onCancel: () => void;
}) {
  const { t } = useI18n();
  return (
    <>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="actions">
        <button type="button" onClick={onCancel}>
          {t('common.cancel')}
        </button>
        <button type="submit" className="primary" disabled={disabled}>
          {submitLabel}
        </button>
      </div>
    </>
  );
}
