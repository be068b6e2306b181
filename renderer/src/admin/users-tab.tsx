/** Users: search, create, change role, disable/enable, reset password, reset two-factor, access (roles, sessions, keys), delete. */
import { useEffect, useState } from 'react';
import type { User } from '../api/types';
import { useI18n } from '../i18n';
import { useSession } from '../auth/session';
import { Dialog } from '../ui/dialog';
import { ConfirmDialog, FormFooter, NameDialog } from '../ui/forms';
import { errorText, useToast } from '../ui/toast';
import * as admin from './admin-api';
import { UserAccess } from './user-access';

const ROLES = ['admin', 'user', 'viewer'] as const;

export function UsersTab() {
  const { t } = useI18n();
  const toast = useToast();
  const me = useSession().user;
  const [q, setQ] = useState('');
  const [rows, setRows] = useState<User[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [adding, setAdding] = useState(false);
  const [resetting, setResetting] = useState<User | null>(null);
  const [removing, setRemoving] = useState<User | null>(null);
  const [mfaReset, setMfaReset] = useState<User | null>(null);
  const [access, setAccess] = useState<User | null>(null);
  // Who has a second factor: a route of its own, so an older server without it just shows no badge.
  const [twoFactor, setTwoFactor] = useState<Set<number>>(new Set());
  const load = (query = q) => {
    void admin.mfaEnrolled().then(
      (l) => setTwoFactor(new Set(l.map((u) => u.user_id))),
      () => setTwoFactor(new Set()),
    );
    return admin.users(query).then((r) => {
      setRows(r);
      setError(null);
    }, setError);
  };
  useEffect(() => void load(''), []);
  const act = (p: Promise<unknown>) => p.then(() => load(), toast.error);

  return (
    <div>
      <div className="toolbar">
        <form
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            void load();
          }}
        >
          <label className="sr-only" htmlFor="user-q">
            {t('users.search')}
          </label>
          <input id="user-q" type="search" placeholder={t('users.search')} value={q} onChange={(e) => setQ(e.target.value)} />
        </form>
        <button type="button" className="primary" onClick={() => setAdding(true)}>
          {t('users.add')}
        </button>
      </div>
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      {rows && (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{t('users.email')}</th>
                <th scope="col">{t('users.username')}</th>
                <th scope="col">{t('users.role')}</th>
                <th scope="col">{t('users.status')}</th>
                <th scope="col">
                  <span className="sr-only">{t('files.actions', { name: '' })}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((u) => (
                <tr key={u.id}>
                  <td>{u.email}</td>
                  <td>{u.username}</td>
                  <td>
                    <select
                      aria-label={`${t('users.role')} ${u.email}`}
                      value={u.role}
                      disabled={u.id === me.id}
                      onChange={(e) => void act(admin.updateUser(u.id, { role: e.target.value }))}
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {t(`users.role.${r}`)}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td>
                    <span className={`pill ${u.disabled ? 'revoked' : 'active'}`}>{t(u.disabled ? 'users.disabled' : 'users.active')}</span>
                    {twoFactor.has(u.id) && (
                      <>
                        {' '}
                        <span className="pill">{t('users.mfa')}</span>
                      </>
                    )}
                  </td>
                  <td>
                    <div className="row-actions">
                      <button type="button" className="small" disabled={u.id === me.id} onClick={() => void act(admin.setDisabled(u.id, !u.disabled))}>
                        {t(u.disabled ? 'users.enable' : 'users.disable')}
                      </button>
                      <button type="button" className="small" onClick={() => setAccess(u)}>
                        {t('users.access')}
                      </button>
                      <button type="button" className="small" onClick={() => setResetting(u)}>
                        {t('users.reset')}
                      </button>
                      {twoFactor.has(u.id) && (
                        <button type="button" className="small" onClick={() => setMfaReset(u)}>
                          {t('users.mfa_reset')}
                        </button>
                      )}
                      <button type="button" className="small danger" disabled={u.id === me.id} onClick={() => setRemoving(u)}>
                        {t('common.delete')}
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {access && <UserAccess user={access} onChanged={() => void load()} onClose={() => setAccess(null)} />}
      {adding && <AddUser onDone={() => void load()} onClose={() => setAdding(false)} />}
      {resetting && (
        <NameDialog
          title={t('users.reset')}
          label={t('users.new_password', { email: resetting.email })}
          submitLabel={t('common.save')}
          onClose={() => setResetting(null)}
          onSubmit={async (pw) => {
            await admin.updateUser(resetting.id, { password: pw });
            toast.info(t('settings.saved'));
          }}
        />
      )}
      {mfaReset && (
        <ConfirmDialog
          title={t('users.mfa_reset')}
          text={t('users.mfa_reset_confirm', { email: mfaReset.email })}
          confirmLabel={t('users.mfa_reset')}
          danger
          onConfirm={() => void act(admin.resetMfa(mfaReset.id).then(() => toast.info(t('users.mfa_reset_done', { email: mfaReset.email }))))}
          onClose={() => setMfaReset(null)}
        />
      )}
      {removing && (
        <ConfirmDialog
          title={t('common.delete')}
          text={t('users.confirm_delete', { email: removing.email })}
          confirmLabel={t('common.delete')}
          danger
          onConfirm={() => void act(admin.deleteUser(removing.id))}
          onClose={() => setRemoving(null)}
        />
      )}
    </div>
  );
}

function AddUser({ onDone, onClose }: { onDone: () => void; onClose: () => void }) {
  const { t } = useI18n();
  const [f, setF] = useState({ email: '', username: '', role: 'user', password: '' });
  const [error, setError] = useState<string | null>(null);
  // Checked when a field is left (not per keystroke): "already in use" shows before the form is sent.
  const [taken, setTaken] = useState<{ email?: string; username?: string }>({});
  const check = (field: 'email' | 'username') => {
    const value = f[field].trim();
    if (!value) return setTaken((x) => ({ ...x, [field]: undefined }));
    admin.checkAccount({ [field]: value }).then(
      () => setTaken((x) => ({ ...x, [field]: undefined })),
      (err) => setTaken((x) => ({ ...x, [field]: errorText(err, t) })),
    );
  };
  const note = (field: 'email' | 'username') =>
    taken[field] && (
      <span className="error" id={`add-${field}-note`} data-testid={`add-${field}-note`}>
        {taken[field]}
      </span>
    );
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    try {
      await admin.createUser(f);
      onDone();
      onClose();
    } catch (err) {
      setError(errorText(err, t));
    }
  };
  return (
    <Dialog title={t('users.add')} onClose={onClose}>
      <form className="form" onSubmit={submit}>
        <label>
          {t('users.email')}
          <input
            type="email"
            required
            autoFocus
            value={f.email}
            onChange={(e) => setF({ ...f, email: e.target.value })}
            onBlur={() => check('email')}
            aria-invalid={taken.email ? true : undefined}
            aria-describedby="add-email-note"
          />
        </label>
        {note('email')}
        <label>
          {t('users.username')}
          <input
            required
            value={f.username}
            onChange={(e) => setF({ ...f, username: e.target.value })}
            onBlur={() => check('username')}
            aria-invalid={taken.username ? true : undefined}
            aria-describedby="add-username-note"
          />
        </label>
        {note('username')}
        <label>
          {t('users.role')}
          <select value={f.role} onChange={(e) => setF({ ...f, role: e.target.value })}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {t(`users.role.${r}`)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('users.password')}
          <input
            type="password"
            autoComplete="new-password"
            required
            minLength={8}
            value={f.password}
            onChange={(e) => setF({ ...f, password: e.target.value })}
          />
        </label>
        <FormFooter error={error} submitLabel={t('common.create')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
