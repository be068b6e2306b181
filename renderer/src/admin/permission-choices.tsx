/**
 * One row per permission with three choices: not set (the text the caller
 * gives says what that means here), allow, deny. Used for a custom role's
 * settings and for a person's exceptions. `value` holds only the set ones.
 */
import type { PermissionCatalogue } from '../api/types';
import { useI18n } from '../i18n';
import { permissionHint, permissionName } from '../account/permission-words';

interface Props {
  catalogue: PermissionCatalogue;
  value: Record<string, boolean>;
  onChange: (v: Record<string, boolean>) => void;
  /** The "not set" option's words for permission `id` ("As the built-in role", "Inherit: allowed by …"). */
  unset: (id: string) => string;
  legend: string;
}

export function PermissionChoices({ catalogue, value, onChange, unset, legend }: Props) {
  const { t } = useI18n();
  const set = (id: string, choice: string) => {
    const next = { ...value };
    if (choice === '') delete next[id];
    else next[id] = choice === 'allow';
    onChange(next);
  };
  return (
    <fieldset className="perms">
      <legend>{legend}</legend>
      <div className="perm-grid">
        {catalogue.permissions.map((p) => {
          const name = permissionName(p.id, t, p.description);
          return [
            <label key={p.id} htmlFor={`perm-${p.id}`}>
              {name}
            </label>,
            <select
              key={`${p.id}-select`}
              id={`perm-${p.id}`}
              value={value[p.id] === undefined ? '' : value[p.id] ? 'allow' : 'deny'}
              onChange={(e) => set(p.id, e.target.value)}
            >
              <option value="">{unset(p.id)}</option>
              <option value="allow">{t('perm.allow')}</option>
              <option value="deny">{t('perm.deny')}</option>
            </select>,
            <p key={`${p.id}-hint`} className="hint">
              {permissionHint(p.id, t, p.description)}
            </p>,
          ];
        })}
      </div>
    </fieldset>
  );
}
