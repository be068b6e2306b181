/**
 * The add/edit dialog of an NFS export: the storage or folder (typed, or
 * chosen in the folder picker), the allowed client addresses, the account
 * whose rights apply (and optionally one of its API keys), read-only. The
 * server checks everything; a refusal that names a field is shown under that
 * field, any other under the form.
 */
import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react';
import type { ApiKeyView, NfsExportView } from '../../../server/contract';
import type { User } from '../api/types';
import { ApiError } from '../api/client';
import { FolderPicker } from '../files/folder-picker';
import { useI18n, type Translate } from '../i18n';
import { Dialog } from '../ui/dialog';
import { FormFooter } from '../ui/forms';
import { errorText } from '../ui/toast';
import { userKeys, users as listUsers } from './admin-api';
import { saveNfsExport, type NfsExportInput } from './nfs-api';

type Field = 'path' | 'clients' | 'user_id' | 'key_id';
const FIELDS: readonly string[] = ['path', 'clients', 'user_id', 'key_id'] satisfies Field[];

/** A refusal in the form's words: `{field, text}` when the server named one of ours, else `{text}`. */
export function exportError(err: unknown, t: Translate): { field?: Field; text: string } {
  if (err instanceof ApiError && err.code === 'validation_failed' && FIELDS.includes(String(err.details.field))) {
    const field = err.details.field as Field;
    if (field === 'clients') {
      const value = err.details.value;
      return { field, text: typeof value === 'string' ? t('nfs.err.clients', { value }) : t('nfs.err.clients_empty') };
    }
    return { field, text: t(`nfs.err.${field}`) };
  }
  return { text: errorText(err, t) };
}

/** A labelled control with its hint and its refusal (linked for screen readers). */
function Labelled({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: string;
  error?: string;
  children: (a: { 'aria-invalid'?: true; 'aria-describedby'?: string }) => ReactNode;
}) {
  const id = useId();
  const described = [hint && `${id}-hint`, error && `${id}-err`].filter(Boolean).join(' ') || undefined;
  return (
    <div className="nfs-field">
      <label>
        {label}
        {children({ 'aria-invalid': error ? true : undefined, 'aria-describedby': described })}
      </label>
      {hint && (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p className="error" id={`${id}-err`} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

export function NfsExportForm({ initial, onSaved, onClose }: { initial: NfsExportView | null; onSaved: () => void; onClose: () => void }) {
  const { t } = useI18n();
  const [v, setV] = useState<NfsExportInput>(() => {
    const { path = '', clients = '', user_id = 0, key_id = null, read_only = false } = initial ?? {};
    return { path, clients, user_id, key_id, read_only };
  });
  const [people, setPeople] = useState<User[]>([]);
  const [keys, setKeys] = useState<ApiKeyView[]>([]);
  const [picking, setPicking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [fault, setFault] = useState<{ field?: Field; text: string } | null>(null);
  const set = (patch: Partial<NfsExportInput>) => setV((x) => ({ ...x, ...patch }));
  const errorOf = (f: Field) => (fault?.field === f ? fault.text : undefined);

  useEffect(() => void listUsers('').then(setPeople, (e) => setFault({ text: errorText(e, t) })), [t]);
  useEffect(() => {
    if (!v.user_id) return setKeys([]);
    void userKeys(v.user_id).then(
      (k) => setKeys(k.filter((x) => x.kind === 'key')),
      () => setKeys([]),
    );
  }, [v.user_id]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setFault(null);
    try {
      await saveNfsExport(initial?.id ?? null, { ...v, path: v.path.trim(), clients: v.clients.trim() });
      onSaved();
      onClose();
    } catch (err) {
      setFault(exportError(err, t));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title={initial ? t('nfs.edit_title', { path: initial.path }) : t('nfs.add')} onClose={onClose} wide>
      <form className="form nfs-form" onSubmit={submit} noValidate>
        <Labelled label={t('nfs.path')} error={errorOf('path')}>
          {(a) => (
            <span className="row-input">
              <input {...a} value={v.path} placeholder="/Media" onChange={(e) => set({ path: e.target.value })} />
              <button type="button" onClick={() => setPicking(true)}>
                {t('nfs.choose')}
              </button>
            </span>
          )}
        </Labelled>
        <Labelled label={t('nfs.clients')} hint={t('nfs.clients_hint')} error={errorOf('clients')}>
          {(a) => <input {...a} value={v.clients} placeholder="192.168.1.0/24" onChange={(e) => set({ clients: e.target.value })} />}
        </Labelled>
        <Labelled label={t('nfs.account')} error={errorOf('user_id')}>
          {(a) => (
            <select {...a} value={v.user_id || ''} onChange={(e) => set({ user_id: Number(e.target.value), key_id: null })}>
              <option value="" disabled>
                {t('nfs.account_pick')}
              </option>
              {people.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.username} ({u.email})
                </option>
              ))}
            </select>
          )}
        </Labelled>
        <Labelled label={t('nfs.key')} error={errorOf('key_id')}>
          {(a) => (
            <select {...a} value={v.key_id ?? ''} onChange={(e) => set({ key_id: e.target.value ? Number(e.target.value) : null })}>
              <option value="">{t('nfs.key_none')}</option>
              {keys.map((k) => (
                <option key={k.id} value={k.id}>
                  {k.name}
                  {k.root ? ` (${k.root})` : ''}
                </option>
              ))}
            </select>
          )}
        </Labelled>
        <label className="check">
          <input type="checkbox" checked={v.read_only} onChange={(e) => set({ read_only: e.target.checked })} />
          {t('nfs.read_only')}
        </label>
        <FormFooter error={fault && !fault.field ? fault.text : null} disabled={busy} submitLabel={t('nfs.save')} onCancel={onClose} />
      </form>
      {picking && (
        <FolderPicker title={t('nfs.path')} start={v.path.startsWith('/') ? v.path : '/'} onPick={(path) => set({ path })} onClose={() => setPicking(false)} />
      )}
    </Dialog>
  );
}
