/** One input per driver descriptor field (storages and replication targets share the form). */
import type { DriverDescriptor, DriverField } from '../api/types';
import { useI18n } from '../i18n';
import { optionsOf, type FormValues } from './driver-form';

interface Props {
  descriptor: DriverDescriptor | undefined;
  values: FormValues;
  onChange: (v: FormValues) => void;
  /** Editing a saved backend: an empty secret keeps the stored one, and the form says so. */
  editing: boolean;
}

export function DriverFields({ descriptor, values, onChange, editing }: Props) {
  return (
    <>
      {descriptor?.fields.map((f) => (
        <DriverFieldInput key={f.key} f={f} value={values[f.key]} set={(nv) => onChange({ ...values, [f.key]: nv })} editing={editing} />
      ))}
    </>
  );
}

function DriverFieldInput({
  f,
  value: v,
  set,
  editing,
}: {
  f: DriverField;
  value: string | boolean | undefined;
  set: (v: string | boolean) => void;
  editing: boolean;
}) {
  const { t } = useI18n();
  const id = `f-${f.key}`;
  const label = f.label || f.key;
  if (f.type === 'bool')
    return (
      <label className="check">
        <input type="checkbox" checked={v === true} onChange={(e) => set(e.target.checked)} />
        {label}
      </label>
    );
  return (
    <label htmlFor={id}>
      {label}
      {f.required ? ' *' : ''}
      {f.type === 'select' ? (
        <select id={id} value={String(v)} required={f.required} onChange={(e) => set(e.target.value)}>
          <option value="">—</option>
          {optionsOf(f).map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      ) : f.type === 'text' ? (
        <textarea id={id} rows={4} value={String(v)} required={f.required} placeholder={f.placeholder} onChange={(e) => set(e.target.value)} />
      ) : (
        <input
          id={id}
          type={f.type === 'password' || f.secret ? 'password' : f.type === 'int' ? 'number' : f.type === 'date' ? 'date' : 'text'}
          value={String(v)}
          required={f.required}
          placeholder={f.placeholder}
          autoComplete="off"
          onChange={(e) => set(e.target.value)}
        />
      )}
      {f.help && <small className="hint">{f.help}</small>}
      {f.root && <small className="hint">{t('storage.root_field')}</small>}
      {f.secret && editing && <small className="hint">{t('storage.secret_keep')}</small>}
    </label>
  );
}
