/**
 * "Sessions & keys" (`/account/access`): where the person is signed in (sign
 * one out, or every other one), their API keys and paired devices (new key,
 * revoke), and pairing a phone.
 */
import { useCallback, useEffect, useState } from 'react';
import type { ApiKeyView, SessionView } from '../api/types';
import { useSession } from '../auth/session';
import { useI18n } from '../i18n';
import { ConfirmDialog } from '../ui/forms';
import { errorText, useToast } from '../ui/toast';
import * as access from './access-api';
import { KeysTable, SessionsTable } from './access-tables';
import { NewKeyDialog } from './new-key-dialog';
import { PairPhone } from './pair-phone';
import { SshKeysCard } from './ssh-keys';

type Open = { kind: 'new-key' } | { kind: 'revoke-key'; key: ApiKeyView } | { kind: 'others' } | null;

export function AccessPage({ pair }: { pair: boolean }) {
  const { t } = useI18n();
  const toast = useToast();
  const { user, signOut } = useSession();
  const [sessions, setSessions] = useState<SessionView[] | null>(null);
  const [keys, setKeys] = useState<ApiKeyView[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [open, setOpen] = useState<Open>(null);
  const load = useCallback(() => {
    access.sessions().then(setSessions, setError);
    access.keys().then(setKeys, setError);
  }, []);
  useEffect(load, [load]);
  const close = () => setOpen(null);

  /** Runs a change, then says what it did (its answer) and re-reads the lists; a refusal becomes a toast. */
  const run = (change: () => Promise<string>) =>
    change().then((done) => {
      toast.info(done);
      load();
    }, toast.error);
  const revokeSession = (s: SessionView) =>
    // Signing this browser out ends the page's session too.
    s.current ? access.revokeSession(s.id).then(signOut, toast.error) : run(async () => (await access.revokeSession(s.id), t('access.sessions.revoked_one')));
  const revokeOthers = () => run(async () => t('access.sessions.revoked', { n: (await access.revokeOtherSessions()).revoked }));
  const revokeKey = (k: ApiKeyView) => run(async () => (await access.revokeKey(k.id), t('keys.revoked', { name: k.name })));
  const others = (sessions ?? []).filter((s) => !s.current).length;

  return (
    <section className="access" aria-labelledby="access-title">
      <h1 id="access-title">{t('account.access')}</h1>
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      {/* Opened for pairing (the tray's "Pair a phone…"): that section comes first. */}
      {pair && <PairPhone onPaired={load} />}
      <section className="card" aria-labelledby="sessions-title">
        <h2 id="sessions-title">{t('access.sessions')}</h2>
        {sessions && <SessionsTable sessions={sessions} onRevoke={(s) => void revokeSession(s)} />}
        <div className="actions">
          <button type="button" className="danger" disabled={!others} onClick={() => setOpen({ kind: 'others' })}>
            {t('access.sessions.others')}
          </button>
        </div>
      </section>
      <section className="card" aria-labelledby="keys-title">
        <h2 id="keys-title">{t('keys.title')}</h2>
        <p className="hint">{t('keys.intro')}</p>
        {keys && <KeysTable keys={keys} onRevoke={(key) => setOpen({ kind: 'revoke-key', key })} />}
        <div className="actions">
          <button type="button" className="primary" onClick={() => setOpen({ kind: 'new-key' })}>
            {t('keys.new')}
          </button>
        </div>
      </section>
      <SshKeysCard />
      {!pair && <PairPhone onPaired={load} />}
      {open?.kind === 'new-key' && (
        <NewKeyDialog title={t('keys.new')} allowAdmin={user.role === 'admin'} create={access.createKey} onCreated={load} onClose={close} />
      )}
      {open?.kind === 'revoke-key' && (
        <ConfirmDialog
          title={t('keys.revoke_named', { name: open.key.name })}
          text={t('keys.revoke_text')}
          confirmLabel={t('keys.revoke')}
          danger
          onConfirm={() => void revokeKey(open.key)}
          onClose={close}
        />
      )}
      {open?.kind === 'others' && (
        <ConfirmDialog
          title={t('access.sessions.others')}
          text={t('access.sessions.others_text', { n: others })}
          confirmLabel={t('access.sessions.others')}
          danger
          onConfirm={() => void revokeOthers()}
          onClose={close}
        />
      )}
    </section>
  );
}
