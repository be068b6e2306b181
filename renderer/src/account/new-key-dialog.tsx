/**
 * "New key": a name, what the key may do (checkboxes in plain words), an
 * optional folder it is confined to, and its lifetime; then the token, shown
 * this once. The same dialog makes a key for someone else in the admin's
 * user panel (`create` decides whose).
 */
import { useState } from 'react';
import type { ApiKeyCreated, KeyVerb } from '../api/types';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { FormFooter } from '../ui/forms';
import { useSubmit } from '../ui/use-submit';
import type { NewKey } from './access-api';
import { ExpirySelect, FolderField, keyError, TokenOnce } from './key-fields';
import { KEY_VERBS, permissionHint, permissionName } from './permission-words';

interface Props {
  title: string;
  /** Offer the `admin` verb (only an admin's own key may have it). */
  allowAdmin: boolean;
  create: (body: NewKey) => Promise<ApiKeyCreated>;
  /** Called once the key exists (the list behind can reload). */
  onCreated: () => void;
  onClose: () => void;
}

export function NewKeyDialog({ title, allowAdmin, create, onCreated, onClose }: Props) {
  const { t } = useI18n();
  const [name, setName] = useState('');
  const [verbs, setVerbs] = useState<Set<KeyVerb>>(new Set(['files:read']));
  const [root, setRoot] = useState<string | null>(null);
  const [days, setDays] = useState(90);
  const [token, setToken] = useState<string | null>(null);
  const { submit, busy, error } = useSubmit(async () => {
    const body: NewKey = { name: name.trim(), verbs: KEY_VERBS.filter((v) => verbs.has(v)), root, ...(days ? { expires_in_days: days } : {}) };
    try {
      setToken((await create(body)).token);
    } catch (e) {
      throw keyError(e, t);
    }
    onCreated();
  });
  const toggle = (v: KeyVerb, on: boolean) =>
    setVerbs((s) => {
      const n = new Set(s);
      if (on) n.add(v);
      else n.delete(v);
      return n;
    });

  if (token)
    return (
      <Dialog title={title} onClose={onClose}>
        <TokenOnce token={token} />
        <div className="actions">
          <button type="button" className="primary" data-autofocus onClick={onClose}>
            {t('keys.done')}
          </button>
        </div>
      </Dialog>
    );

  return (
    <Dialog title={title} onClose={onClose}>
      <form className="form" onSubmit={submit}>
        <label>
          {t('keys.name')}
          <input data-autofocus required maxLength={100} placeholder={t('keys.name.hint')} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <fieldset className="verbs">
          <legend>{t('keys.may')}</legend>
          {KEY_VERBS.filter((v) => v !== 'admin' || allowAdmin).map((v) => (
            <label key={v} className="check">
              <input type="checkbox" checked={verbs.has(v)} onChange={(e) => toggle(v, e.target.checked)} />
              <span>
                {permissionName(v, t)} <span className="hint">— {permissionHint(v, t)}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <FolderField value={root} onChange={setRoot} />
        {verbs.has('admin') && root && <p className="hint">{t('keys.admin_no_root')}</p>}
        <ExpirySelect value={days} onChange={setDays} allowNever />
        <FormFooter error={error} disabled={busy || !name.trim() || verbs.size === 0} submitLabel={t('keys.create')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
