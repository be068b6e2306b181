/**
 * Modal dialog on the native <dialog> element: the browser traps focus, closes on
 * Escape and renders it in the top layer; we only add the title and a close button.
 * On open, focus goes to the element marked `data-autofocus`, else the first field
 * (showModal alone would focus the close button, the first focusable element).
 */
import { useEffect, useId, useRef, type ReactNode } from 'react';
import { useI18n } from '../i18n';

interface Props {
  title: string;
  onClose: () => void;
  children: ReactNode;
  /** Wide dialogs (previews, editor, admin forms). */
  wide?: boolean;
  /** Called before an Escape/close-button close; return false to keep the dialog open. */
  canClose?: () => boolean;
}

export function Dialog({ title, onClose, children, wide, canClose }: Props) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  const { t } = useI18n();
  useEffect(() => {
    const d = ref.current!;
    if (!d.open) d.showModal();
    const first =
      d.querySelector<HTMLElement>('[data-autofocus]') ??
      d.querySelector<HTMLElement>('.dialog-body :is(input:not([type=hidden]):not([readonly]), select, textarea)');
    first?.focus();
    return () => d.close();
  }, []);
  const tryClose = () => {
    if (!canClose || canClose()) onClose();
  };
  return (
    <dialog
      ref={ref}
      className={wide ? 'dialog wide' : 'dialog'}
      aria-labelledby={id}
      onCancel={(e) => {
        e.preventDefault();
        tryClose();
      }}
    >
      <header className="dialog-head">
        <h2 id={id}>{title}</h2>
        <button type="button" className="icon-btn" aria-label={t('common.close')} onClick={tryClose}>
          ✕
        </button>
      </header>
      <div className="dialog-body">{children}</div>
    </dialog>
  );
}
