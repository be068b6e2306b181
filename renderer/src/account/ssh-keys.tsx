/**
 * The "SSH keys" card of "Sessions & keys": the public keys that sign this
 * account in to the SFTP gateway (name, fingerprint, when added and last
 * used), adding one by pasting its `.pub` line, and removing one. See
 * docs/gateways-sftp.md.
 */
import { useCallback, useEffect, useState } from 'react';
import { api, ApiError } from '../api/client';
import type { SshKeyView } from '../api/types';
import { useI18n, type Translate } from '../i18n';
import { formatDate } from '../lib/format';
import { Dialog } from '../ui/dialog';
import { ConfirmDialog, FormFooter } from '../ui/forms';
import { ActionsTableHead } from '../ui/table-head';
import { errorText, useToast } from '../ui/toast';
import { useSubmit } from '../ui/use-submit';

const listKeys = async () => (await api<{ keys: SshKeyView[] }>('/api/auth/ssh-keys')).keys;
const addKey = (body: { name?: string; public_key: string }) => api<{ key: SshKeyView }>('/api/auth/ssh-keys', { body });
const removeKey = (id: number) => api(`/api/auth/ssh-keys/${id}`, { method: 'DELETE' });

/** A refused key in the form's words: the server's reason names what is wrong with the pasted text. */
function pasteError(err: unknown, t: Translate): Error {
  if (err instanceof ApiError && err.code === 'validation_failed' && err.details.field === 'public_key') {
    const reason = String(err.details.reason ?? '');
    return new Error(reason.includes('private') ? t('sshkeys.err.private') : reason.includes('2048') ? t('sshkeys.err.weak') : t('sshkeys.err.invalid'));
  }
  if (err instanceof ApiError && err.code === 'conflict') return new Error(t('sshkeys.err.twice'));
  return new Error(errorText(err, t));
}

function AddKeyDialog({ onAdded, onClose }: { onAdded: (k: SshKeyView) => void; onClose: () => void }) {
  const { t } = useI18n();
  const [name, setName] = useState('');
  const [text, setText] = useState('');
  const { submit, busy, error } = useSubmit(async () => {
    try {
      onAdded((await addKey({ public_key: text.trim(), ...(name.trim() ? { name: name.trim() } : {}) })).key);
    } catch (e) {
      throw pasteError(e, t);
    }
  });
  return (
    <Dialog title={t('sshkeys.add')} onClose={onClose}>
      <form className="form" onSubmit={submit}>
        <label>
          {t('sshkeys.key')}
          <textarea
            data-autofocus
            required
            rows={4}
            spellCheck={false}
            placeholder="ssh-ed25519 AAAA… you@laptop"
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
        </label>
        <p className="hint">{t('sshkeys.key.hint')}</p>
        <label>
          {t('keys.name')}
          <input maxLength={100} placeholder={t('sshkeys.name.hint')} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <FormFooter error={error} disabled={busy || !text.trim()} submitLabel={t('sshkeys.add')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

export function SshKeysCard() {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [keys, setKeys] = useState<SshKeyView[] | null>(null);
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<SshKeyView | null>(null);
  const load = useCallback(() => void listKeys().then(setKeys, toast.error), [toast]);
  useEffect(load, [load]);
  const remove = (k: SshKeyView) =>
    removeKey(k.id).then(() => {
      toast.info(t('sshkeys.removed', { name: k.name }));
      load();
    }, toast.error);

  return (
    <section className="card" aria-labelledby="sshkeys-title">
      <h2 id="sshkeys-title">{t('sshkeys.title')}</h2>
      <p className="hint">{t('sshkeys.intro')}</p>
      {keys && !keys.length && <p className="muted">{t('sshkeys.none')}</p>}
      {keys && keys.length > 0 && (
        <div className="table-wrap">
          <table className="table" data-testid="ssh-keys">
            <ActionsTableHead columns={[t('keys.name'), t('sshkeys.fingerprint'), t('keys.created'), t('keys.last_used')]} />
            <tbody>
              {keys.map((k) => (
                <tr key={k.id}>
                  <td>
                    {k.name}
                    <div className="hint">{k.algo}</div>
                  </td>
                  <td className="wrap">
                    <code>{k.fingerprint}</code>
                  </td>
                  <td>{formatDate(k.created_at, lang)}</td>
                  <td>{k.last_used_at ? formatDate(k.last_used_at, lang) : t('common.never')}</td>
                  <td>
                    <button type="button" className="small danger" aria-label={t('sshkeys.remove_named', { name: k.name })} onClick={() => setRemoving(k)}>
                      {t('sshkeys.remove')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div className="actions">
        <button type="button" className="primary" onClick={() => setAdding(true)}>
          {t('sshkeys.add')}
        </button>
      </div>
      {adding && (
        <AddKeyDialog
          onAdded={(k) => {
            setAdding(false);
            toast.info(t('sshkeys.added', { name: k.name }));
            load();
          }}
          onClose={() => setAdding(false)}
        />
      )}
      {removing && (
        <ConfirmDialog
          title={t('sshkeys.remove_named', { name: removing.name })}
          text={t('sshkeys.remove_text')}
          confirmLabel={t('sshkeys.remove')}
          danger
          onConfirm={() => void remove(removing)}
          onClose={() => setRemoving(null)}
        />
      )}
    </section>
  );
}
