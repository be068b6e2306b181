/**
 * Form parts shared by the new-key dialog and phone pairing: the folder a key
 * is confined to (chosen with the folder picker), its lifetime, and the
 * server's field refusals in words of the form.
 */
import { useState } from 'react';
import { ApiError } from '../api/client';
import { useI18n, type Translate } from '../i18n';
import { FolderPicker } from '../files/folder-picker';
import { CopyField } from '../ui/copy-field';
import { errorText } from '../ui/toast';

/** Lifetimes offered, in days; `0` is "never" where the form allows it. */
const DAYS = [7, 30, 90, 365];

export function ExpirySelect({ value, onChange, allowNever }: { value: number; onChange: (days: number) => void; allowNever?: boolean }) {
  const { t } = useI18n();
  return (
    <label>
      {t('keys.expiry')}
      <select value={value} onChange={(e) => onChange(Number(e.target.value))}>
        {allowNever && <option value={0}>{t('keys.expiry.never')}</option>}
        {DAYS.map((d) => (
          <option key={d} value={d}>
            {t('keys.expiry.days', { n: d })}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The folder a key is confined to; `required` forms offer no "all folders". */
export function FolderField({ value, onChange, required }: { value: string | null; onChange: (root: string | null) => void; required?: boolean }) {
  const { t } = useI18n();
  const [picking, setPicking] = useState(false);
  return (
    <div className="folder-field">
      <span>{t('keys.folder')}</span>
      <span className="row-input">
        <output data-testid="key-folder">{value ?? (required ? t('keys.folder.none') : t('keys.everywhere'))}</output>
        <button type="button" onClick={() => setPicking(true)}>
          {t('keys.folder.choose')}
        </button>
        {value && !required && (
          <button type="button" onClick={() => onChange(null)}>
            {t('keys.folder.clear')}
          </button>
        )}
      </span>
      {picking && <FolderPicker title={t('keys.folder.choose')} start={value ?? '/'} onPick={onChange} onClose={() => setPicking(false)} />}
    </div>
  );
}

/** A refused key request in the form's words when the server names the field; its own sentence otherwise. */
export function keyError(err: unknown, t: Translate): Error {
  if (err instanceof ApiError && err.code === 'validation_failed') {
    const f = err.details.field;
    if (f === 'root') return new Error(t('keys.err.root'));
    if (f === 'verbs') return new Error(t('keys.err.verbs'));
    if (f === 'expires_at') return new Error(t('keys.err.expiry'));
    if (f === 'name' || f === 'label') return new Error(t('keys.err.name'));
  }
  return new Error(errorText(err, t));
}

/** The secret of a key just made, with the warning that it is shown this once. */
export function TokenOnce({ token }: { token: string }) {
  const { t } = useI18n();
  return (
    <>
      <p className="warn" role="alert">
        {t('keys.once')}
      </p>
      <CopyField label={t('keys.token')} value={token} testId="new-token" />
      <p className="hint">{t('keys.how')}</p>
    </>
  );
}
