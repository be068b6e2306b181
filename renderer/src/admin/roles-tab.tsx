/**
 * Admin → Roles: custom roles (permission settings over a person's built-in
 * role) with their member counts, created, edited and deleted here; and, read
 * only, every permission with what the built-in roles allow, and the order
 * in which a decision is made.
 */
import { useCallback, useEffect, useState } from 'react';
import { ApiError } from '../api/client';
import type { PermissionCatalogue, RoleView } from '../api/types';
import { useI18n, type Translate } from '../i18n';
import { Dialog } from '../ui/dialog';
import { ConfirmDialog, FormFooter } from '../ui/forms';
import { errorText, useToast } from '../ui/toast';
import { useSubmit } from '../ui/use-submit';
import { ActionsTableHead } from '../ui/table-head';
import { permissionName } from '../account/permission-words';
import * as admin from './admin-api';
import { PermissionChoices } from './permission-choices';

/** A role's settings in words: "Share links: denied · Change files: allowed". */
const settingsText = (p: Record<string, boolean>, cat: PermissionCatalogue, t: Translate) =>
  cat.permissions
    .filter((x) => p[x.id] !== undefined)
    .map((x) => `${permissionName(x.id, t, x.description)}: ${t(p[x.id] ? 'perm.allowed' : 'perm.denied')}`)
    .join(' · ') || t('roles.no_settings');

export function RolesTab() {
  const { t } = useI18n();
  const toast = useToast();
  const [cat, setCat] = useState<PermissionCatalogue | null>(null);
  const [rows, setRows] = useState<RoleView[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [editing, setEditing] = useState<RoleView | 'new' | null>(null);
  const [removing, setRemoving] = useState<RoleView | null>(null);
  const load = useCallback(() => void admin.roles().then(setRows, setError), []);
  useEffect(() => {
    admin.permissions().then(setCat, setError);
    load();
  }, [load]);

  const remove = (r: RoleView) =>
    admin.deleteRole(r.id).then(() => {
      toast.info(t('roles.deleted', { name: r.name }));
      load();
    }, toast.error);

  return (
    <div className="settings roles">
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      <section className="card" aria-labelledby="roles-title">
        <h2 id="roles-title">{t('roles.title')}</h2>
        <p className="hint">{t('roles.intro')}</p>
        {rows &&
          cat &&
          (rows.length === 0 ? (
            <p className="muted">{t('roles.none')}</p>
          ) : (
            <div className="table-wrap">
              <table className="table" data-testid="roles">
                <ActionsTableHead columns={[t('roles.name'), t('roles.members'), t('roles.settings')]} />
                <tbody>
                  {rows.map((r) => (
                    <tr key={r.id}>
                      <td>{r.name}</td>
                      <td>{r.members}</td>
                      <td>{settingsText(r.permissions, cat, t)}</td>
                      <td>
                        <div className="row-actions">
                          <button type="button" className="small" onClick={() => setEditing(r)}>
                            {t('common.edit')}
                          </button>
                          <button type="button" className="small danger" onClick={() => setRemoving(r)}>
                            {t('common.delete')}
                          </button>
                        </div>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ))}
        <div className="actions">
          <button type="button" className="primary" disabled={!cat} onClick={() => setEditing('new')}>
            {t('roles.new')}
          </button>
        </div>
      </section>
      {cat && <BuiltIn cat={cat} />}
      {editing && cat && <RoleDialog role={editing === 'new' ? null : editing} cat={cat} onSaved={load} onClose={() => setEditing(null)} />}
      {removing && (
        <ConfirmDialog
          title={t('common.delete')}
          text={t('roles.confirm_delete', { name: removing.name, n: removing.members })}
          confirmLabel={t('common.delete')}
          danger
          onConfirm={() => void remove(removing)}
          onClose={() => setRemoving(null)}
        />
      )}
    </div>
  );
}

/** The permission catalogue and what each built-in role may do (read only). */
function BuiltIn({ cat }: { cat: PermissionCatalogue }) {
  const { t } = useI18n();
  const mark = (on: boolean) => <td className={on ? 'yes' : 'no'}>{t(on ? 'perm.allowed' : 'perm.denied')}</td>;
  return (
    <section className="card" aria-labelledby="builtin-title">
      <h2 id="builtin-title">{t('roles.builtin')}</h2>
      <p className="hint">{t('roles.order')}</p>
      <div className="table-wrap">
        <table className="table matrix" data-testid="matrix">
          <thead>
            <tr>
              <th scope="col">{t('roles.permission')}</th>
              <th scope="col">{t('users.role.admin')}</th>
              <th scope="col">{t('users.role.user')}</th>
              <th scope="col">{t('users.role.viewer')}</th>
            </tr>
          </thead>
          <tbody>
            {cat.permissions.map((p) => (
              <tr key={p.id}>
                <th scope="row">
                  {permissionName(p.id, t, p.description)} <code className="hint">{p.id}</code>
                </th>
                {mark(true)}
                {mark(cat.matrix.user[p.id] === true)}
                {mark(cat.matrix.viewer[p.id] === true)}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function RoleDialog({ role, cat, onSaved, onClose }: { role: RoleView | null; cat: PermissionCatalogue; onSaved: () => void; onClose: () => void }) {
  const { t } = useI18n();
  const [name, setName] = useState(role?.name ?? '');
  const [perms, setPerms] = useState<Record<string, boolean>>(role?.permissions ?? {});
  const { submit, busy, error } = useSubmit(async () => {
    try {
      await admin.saveRole(role?.id ?? null, { name: name.trim(), permissions: perms });
    } catch (e) {
      throw e instanceof ApiError && e.code === 'name_taken' ? new Error(t('roles.name_taken', { name: name.trim() })) : e;
    }
    onSaved();
    onClose();
  });
  return (
    <Dialog title={role ? t('roles.edit', { name: role.name }) : t('roles.new')} onClose={onClose} wide>
      <form className="form" onSubmit={submit}>
        <label>
          {t('roles.name')}
          <input data-autofocus required maxLength={64} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <PermissionChoices catalogue={cat} value={perms} onChange={setPerms} unset={() => t('roles.as_builtin')} legend={t('roles.settings')} />
        <FormFooter error={error} disabled={busy || !name.trim()} submitLabel={t('common.save')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
