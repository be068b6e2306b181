/**
 * A person's role and permissions in the admin's user panel: the custom role
 * over their built-in one, their own exceptions (inherit / allow / deny per
 * permission, each "inherit" saying what it gives and why), and their groups.
 */
import { useEffect, useState } from 'react';
import type { PermissionCatalogue, RoleView, User } from '../api/types';
import { useI18n } from '../i18n';
import { errorText, useToast } from '../ui/toast';
import * as admin from './admin-api';
import { PermissionChoices } from './permission-choices';

export function UserPermissions({ user, onChanged }: { user: User; onChanged: () => void }) {
  const { t } = useI18n();
  const toast = useToast();
  const [cat, setCat] = useState<PermissionCatalogue | null>(null);
  const [roles, setRoles] = useState<RoleView[]>([]);
  const [roleId, setRoleId] = useState<number | null>(user.custom_role_id ?? null);
  const [own, setOwn] = useState<Record<string, boolean> | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    admin.permissions().then(setCat, setError);
    admin.roles().then(setRoles, setError);
    admin.exceptions(user.id).then(setOwn, setError);
  }, [user.id]);

  const custom = roles.find((r) => r.id === roleId) ?? null;
  /** What "inherit" gives for `id`: the custom role when it names it, else the built-in role. */
  const inherited = (id: string) => {
    const state = (on: boolean) => t(on ? 'perm.allowed' : 'perm.denied');
    if (user.role === 'admin') return t('perm.inherit', { what: t('perm.from_admin') });
    if (custom && custom.permissions[id] !== undefined)
      return t('perm.inherit', { what: t('perm.from_custom', { name: custom.name, state: state(custom.permissions[id]) }) });
    const builtIn = cat?.matrix[user.role as 'user' | 'viewer']?.[id] === true;
    return t('perm.inherit', { what: t('perm.from_builtin', { name: t(`users.role.${user.role}`), state: state(builtIn) }) });
  };

  const chooseRole = async (id: number | null) => {
    try {
      await admin.setCustomRole(user.id, id);
      setRoleId(id);
      toast.info(t('settings.saved'));
      onChanged();
    } catch (e) {
      toast.error(e);
    }
  };
  const saveExceptions = async () => {
    try {
      setOwn(await admin.putExceptions(user.id, own ?? {}));
      toast.info(t('settings.saved'));
    } catch (e) {
      toast.error(e);
    }
  };

  return (
    <section aria-labelledby="user-perms-title">
      <h3 id="user-perms-title">{t('users.perms')}</h3>
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      <p>{t('users.builtin_role', { role: t(`users.role.${user.role}`) })}</p>
      <label>
        {t('users.custom_role')}{' '}
        <select value={roleId ?? ''} onChange={(e) => void chooseRole(e.target.value === '' ? null : Number(e.target.value))}>
          <option value="">{t('users.custom_role.none')}</option>
          {roles.map((r) => (
            <option key={r.id} value={r.id}>
              {r.name}
            </option>
          ))}
        </select>
      </label>
      <p className="hint">{t('roles.order')}</p>
      {cat && own && (
        <>
          <PermissionChoices catalogue={cat} value={own} onChange={setOwn} unset={inherited} legend={t('users.exceptions')} />
          <div className="actions">
            <button type="button" className="primary" onClick={() => void saveExceptions()}>
              {t('users.exceptions.save')}
            </button>
          </div>
        </>
      )}
      <p data-testid="user-groups">{user.groups?.length ? t('users.groups', { groups: user.groups.join(', ') }) : t('users.groups.none')}</p>
    </section>
  );
}
