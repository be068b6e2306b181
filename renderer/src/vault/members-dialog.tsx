/**
 * "Members…" of an encrypted folder's root: who holds its keys, people with a
 * vault to add, members to remove. Saving makes the next key version, wraps it
 * for every member of the new set (members-rotate.ts), sends the whole set and
 * forgets the cached keyring. The dialog says plainly what a change does and
 * does not do: a new member reads only files added from now on, and a removed
 * member keeps whatever they downloaded before. Only the owner may change the
 * set; everyone else sees it.
 */
import { useEffect, useState } from 'react';
import './members-dialog.css';
import { useI18n } from '../i18n';
import { useSession } from '../auth/session';
import { Dialog } from '../ui/dialog';
import { FormFooter } from '../ui/forms';
import { useSubmit } from '../ui/use-submit';
import { useToast, errorText } from '../ui/toast';
import { findVaultPeople, type VaultPerson } from './members-api';
import { rotateMembers, type KeyedPerson } from './members-rotate';
import { getFolder, setMembers as putMembers, type VaultFolder } from './vault-api';
import { forgetFolder, requestUnlock, vaultCrypto } from './vault-store';

const who = (p: VaultPerson) => (p.display_name && p.display_name !== p.name ? `${p.display_name} (${p.name})` : p.name);

/** People matching `q` who have a vault, as the person types (a short pause first). */
function usePeople(q: string, skip: Set<number>): VaultPerson[] {
  const [found, setFound] = useState<VaultPerson[]>([]);
  useEffect(() => {
    if (!q.trim()) return setFound([]);
    let live = true;
    const t = setTimeout(() => {
      findVaultPeople(q.trim())
        .then((people) => live && setFound(people))
        .catch(() => live && setFound([]));
    }, 250);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [q]);
  return found.filter((p) => !skip.has(p.id));
}

/** Public keys for members whose row came without one (the folder's list): the caller's own, else the people search. */
async function keyed(members: VaultPerson[], me: { userId: number; publicKey: string }): Promise<KeyedPerson[]> {
  return Promise.all(
    members.map(async (m) => {
      if (m.public_key) return m as KeyedPerson;
      if (m.id === me.userId) return { ...m, public_key: me.publicKey };
      const hit = (await findVaultPeople(m.name)).find((p) => p.id === m.id && p.public_key);
      if (!hit) throw new Error(m.name);
      return { ...m, public_key: hit.public_key! };
    }),
  );
}

export function MembersDialog({ folderId, name, onClose }: { folderId: number; name: string; onClose: () => void }) {
  const { t } = useI18n();
  const toast = useToast();
  const me = useSession().user.id;
  const [folder, setFolder] = useState<VaultFolder | null>(null);
  const [members, setMembers] = useState<VaultPerson[]>([]);
  const [q, setQ] = useState('');
  const [loadError, setLoadError] = useState<string | null>(null);
  const found = usePeople(q, new Set(members.map((m) => m.id)));

  useEffect(() => {
    getFolder(folderId)
      .then((f) => {
        setFolder(f);
        setMembers(f.members);
      })
      .catch((e) => setLoadError(errorText(e, t)));
  }, [folderId, t]);

  const owner = folder?.owner.id === me;
  const before = new Set(folder?.members.map((m) => m.id));
  const changed = !!folder && (members.length !== before.size || members.some((m) => !before.has(m.id)));

  const { submit, busy, error } = useSubmit(async () => {
    if (!folder) return;
    const keys = await requestUnlock();
    let set: KeyedPerson[];
    try {
      set = await keyed(members, keys);
    } catch (e) {
      throw new Error(t('vault.members.no_vault', { name: (e as Error).message }));
    }
    const next = await rotateMembers(await vaultCrypto(), folder.id, folder.key_version, set);
    await putMembers(folder.id, next.key_version, next.members);
    forgetFolder(folder.id);
    toast.info(t('vault.members.saved'));
    onClose();
  });

  return (
    <Dialog title={t('vault.members.title', { name })} onClose={onClose}>
      <form className="form" onSubmit={submit} data-testid="vault-members">
        <p className="hint">{t('vault.members.new_reads')}</p>
        <p className="hint">{t('vault.members.removed_keeps')}</p>
        {loadError && <p className="error">{loadError}</p>}
        {!folder && !loadError && <p className="muted">{t('common.loading')}</p>}
        {folder && (
          <ul className="members-list" aria-label={t('vault.members.current')}>
            {members.map((m) => (
              <li key={m.id} className="actions spread">
                <span>
                  {who(m)}
                  {m.id === folder.owner.id && <span className="chip small">{t('vault.members.owner')}</span>}
                  {!before.has(m.id) && <span className="chip small">{t('vault.members.new')}</span>}
                </span>
                {owner && m.id !== folder.owner.id && (
                  <button type="button" onClick={() => setMembers(members.filter((x) => x.id !== m.id))}>
                    {t('common.remove')}
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
        {folder && owner && (
          <>
            <label>
              {t('vault.members.add')}
              <input type="search" value={q} onChange={(e) => setQ(e.target.value)} placeholder={t('vault.members.search')} />
            </label>
            {q.trim() && !found.length && <p className="hint">{t('vault.members.none_found')}</p>}
            {found.length > 0 && (
              <ul className="members-list" aria-label={t('vault.members.found')}>
                {found.map((p) => (
                  <li key={p.id} className="actions spread">
                    <span>{who(p)}</span>
                    <button
                      type="button"
                      onClick={() => {
                        setMembers([...members, p]);
                        setQ('');
                      }}
                    >
                      {t('common.add')}
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
        {folder && !owner && <p className="hint">{t('vault.members.owner_only', { owner: folder.owner.name })}</p>}
        {owner ? (
          <FormFooter error={error} disabled={busy || !changed} submitLabel={t('common.save')} onCancel={onClose} />
        ) : (
          <div className="actions">
            <button type="button" onClick={onClose}>
              {t('common.close')}
            </button>
          </div>
        )}
      </form>
    </Dialog>
  );
}
