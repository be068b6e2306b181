/**
 * The admin's panel for one person ("Access" on a user row): their role and
 * permissions, where they are signed in (sign one or all out), and their API
 * keys (revoke, or make one for them).
 */
import { useCallback, useEffect, useState } from 'react';
import type { ApiKeyView, SessionView, User } from '../api/types';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { ConfirmDialog } from '../ui/forms';
import { errorText, useToast } from '../ui/toast';
import { revokeKey } from '../account/access-api';
import { KeysTable, SessionsTable } from '../account/access-tables';
import { NewKeyDialog } from '../account/new-key-dialog';
import * as admin from './admin-api';
import { UserPermissions } from './user-permissions';

type Open = { kind: 'new-key' } | { kind: 'revoke-key'; key: ApiKeyView } | { kind: 'all-sessions' } | null;

export function UserAccess({ user, onChanged, onClose }: { user: User; onChanged: () => void; onClose: () => void }) {
  const { t } = useI18n();
  const toast = useToast();
  const [sessions, setSessions] = useState<SessionView[] | null>(null);
  const [keys, setKeys] = useState<ApiKeyView[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [open, setOpen] = useState<Open>(null);
  const load = useCallback(() => {
    admin.userSessions(user.id).then(setSessions, setError);
    admin.userKeys(user.id).then(setKeys, setError);
  }, [user.id]);
  useEffect(load, [load]);
  const act = (p: Promise<unknown>, done: string) =>
    p.then(() => {
      toast.info(done);
      load();
    }, toast.error);
  const close = () => setOpen(null);

  return (
    <Dialog title={t('users.access_title', { email: user.email })} onClose={onClose} wide>
      <div className="user-access">
        <UserPermissions user={user} onChanged={onChanged} />
        {error ? (
          <p className="error" role="alert">
            {errorText(error, t)}
          </p>
        ) : null}
        <section aria-labelledby="user-sessions-title">
          <h3 id="user-sessions-title">{t('users.sessions')}</h3>
          {sessions && (
            <SessionsTable sessions={sessions} onRevoke={(s) => void act(admin.revokeUserSession(user.id, s.id), t('access.sessions.revoked_one'))} />
          )}
          <div className="actions">
            <button type="button" className="danger" disabled={!sessions?.length} onClick={() => setOpen({ kind: 'all-sessions' })}>
              {t('users.sessions.all')}
            </button>
          </div>
        </section>
        <section aria-labelledby="user-keys-title">
          <h3 id="user-keys-title">{t('keys.title')}</h3>
          {keys && <KeysTable keys={keys} onRevoke={(key) => setOpen({ kind: 'revoke-key', key })} />}
          <div className="actions">
            <button type="button" onClick={() => setOpen({ kind: 'new-key' })}>
              {t('users.new_key')}
            </button>
          </div>
        </section>
      </div>
      {open?.kind === 'new-key' && (
        <NewKeyDialog
          title={t('users.new_key')}
          allowAdmin={user.role === 'admin'}
          create={(b) => admin.createUserKey(user.id, b)}
          onCreated={load}
          onClose={close}
        />
      )}
      {open?.kind === 'revoke-key' && (
        <ConfirmDialog
          title={t('keys.revoke_named', { name: open.key.name })}
          text={t('keys.revoke_text')}
          confirmLabel={t('keys.revoke')}
          danger
          onConfirm={() => void act(revokeKey(open.key.id), t('keys.revoked', { name: open.key.name }))}
          onClose={close}
        />
      )}
      {open?.kind === 'all-sessions' && (
        <ConfirmDialog
          title={t('users.sessions.all')}
          text={t('users.sessions.all_text', { email: user.email })}
          confirmLabel={t('users.sessions.all')}
          danger
          onConfirm={() => void act(admin.revokeUserSessions(user.id), t('users.sessions.all_done', { email: user.email }))}
          onClose={close}
        />
      )}
    </Dialog>
  );
}
