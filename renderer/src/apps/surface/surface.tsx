/**
 * Draws an app's surface (docs/app-plugins.md "Surfaces"): every node of the
 * catalogue, the form's seven field types (a `select` as choice buttons),
 * `show_when`/`required_when`, and the footer buttons (the primary one sends
 * `submit`, the others `action` with their id). All app text is React text.
 * The component keeps the values; the host sends the events and keeps `state`.
 * No `change` events are sent: conditions are evaluated here, and the app
 * hears the values at `submit`/`action` (docs/app-plugins.md "The web UI").
 */
import { useEffect, useId, useMemo, useState, type ComponentType, type ReactNode } from 'react';
import { useI18n, type Translate } from '../../i18n';
import { collectValues, hints, isRequired, isShown, knownNodes, initialValues, type Hint } from './logic';
import type { FieldErrors, FormField, SurfaceData, SurfaceEvent, SurfaceNode, Value, Values } from './types';
import { FileChooserInput, PdfFields, PeoplePicker, SignaturePad, type FileChooserProps, type Person } from './widgets';

export interface SurfaceProps {
  surface: SurfaceData;
  /** An event is on its way: the footer is disabled. */
  busy?: boolean;
  /** The server's refusal of the last submit, by field (`required` or a reason). */
  errors?: FieldErrors;
  /** A failure that belongs to no field (the envelope's message). */
  error?: string | null;
  onEvent: (event: SurfaceEvent, actionId: string | undefined, data: Record<string, unknown>, state: unknown) => void;
  /** The address to show a file of the surface (`preview`, `pdf-fields`). */
  fileUrl?: (path: string) => string;
  searchPeople?: (q: string) => Promise<Person[]>;
  /** The picker a `file-chooser` opens; without one the chooser is disabled (public pages). */
  FileChooser?: ComponentType<FileChooserProps>;
}

export function hintText(h: Hint, t: Translate): string {
  if (h.code === 'required') return t('apps.hint.required');
  if (h.code === 'int') return t('apps.hint.int');
  return t(`apps.hint.${h.code}`, { n: h.n });
}

export function Surface({ surface, busy, errors = {}, error, onEvent, fileUrl, searchPeople, FileChooser }: SurfaceProps) {
  const { t } = useI18n();
  const uid = useId();
  const nodes = useMemo(() => knownNodes(surface.nodes), [surface]);
  const [values, setValues] = useState<Values>(() => initialValues(surface));
  const [touched, setTouched] = useState<Set<string>>(new Set());
  useEffect(() => {
    setValues(initialValues(surface));
    setTouched(new Set());
  }, [surface]);
  const clientHints = useMemo(() => hints(surface, values), [surface, values]);
  const set = (key: string, v: Value) => {
    setValues((old) => ({ ...old, [key]: v }));
    setTouched((s) => (s.has(key) ? s : new Set(s).add(key)));
  };
  const errorOf = (key: string): string | null => {
    const server = errors[key];
    if (server)
      return server === 'required' ? t('apps.hint.required') : server === 'invalid' ? t('apps.invalid') : t('apps.invalid_reason', { reason: server });
    const h = clientHints[key];
    return h && touched.has(key) ? hintText(h, t) : null;
  };
  const ids = (key: string) => ({ input: `${uid}-${key}`, msg: `${uid}-${key}-msg` });

  const send = (event: SurfaceEvent, actionId?: string) => onEvent(event, actionId, collectValues(surface, values), surface.state);
  const primary = surface.footer.find((f) => f.primary);

  const labelled = (key: string, label: string, required: boolean, control: ReactNode, help?: string) => {
    const err = errorOf(key);
    return (
      <div className={`app-field${err ? ' invalid' : ''}`} key={key}>
        <label htmlFor={ids(key).input}>
          {label}
          {required && (
            <span className="req" aria-hidden="true">
              {' '}
              *
            </span>
          )}
        </label>
        {control}
        {help && <p className="hint">{help}</p>}
        {err && (
          <p className="error" id={ids(key).msg}>
            {err}
          </p>
        )}
      </div>
    );
  };

  const field = (f: FormField) => {
    if (!isShown(f, values)) return null;
    const required = isRequired(f, values);
    const { input, msg } = ids(f.key);
    const err = !!errorOf(f.key);
    const common = { id: input, 'aria-required': required || undefined, 'aria-invalid': err || undefined, 'aria-describedby': err ? msg : undefined };
    const v = values[f.key];
    const label = f.label ?? f.key;
    if (f.type === 'bool') {
      const e = errorOf(f.key);
      return (
        <div className={`app-field${e ? ' invalid' : ''}`} key={f.key}>
          <label className="check">
            <input type="checkbox" {...common} checked={v === true} onChange={(ev) => set(f.key, ev.target.checked)} /> {label}
          </label>
          {f.help && <p className="hint">{f.help}</p>}
          {e && (
            <p className="error" id={msg}>
              {e}
            </p>
          )}
        </div>
      );
    }
    if (f.type === 'select') {
      const e = errorOf(f.key);
      return (
        <div className={`app-field${e ? ' invalid' : ''}`} key={f.key}>
          <span id={`${input}-label`}>
            {label}
            {required && (
              <span className="req" aria-hidden="true">
                {' '}
                *
              </span>
            )}
          </span>
          <div
            className="choices"
            role="radiogroup"
            aria-labelledby={`${input}-label`}
            aria-required={required || undefined}
            aria-invalid={!!e || undefined}
            aria-describedby={e ? msg : undefined}
          >
            {(f.options ?? []).map((o) => (
              <button key={o.value} type="button" role="radio" aria-checked={v === o.value} onClick={() => set(f.key, o.value)}>
                {o.label ?? o.value}
              </button>
            ))}
          </div>
          {f.help && <p className="hint">{f.help}</p>}
          {e && (
            <p className="error" id={msg}>
              {e}
            </p>
          )}
        </div>
      );
    }
    const text = v === undefined || v === null ? '' : String(v);
    const control =
      f.type === 'text' ? (
        <textarea {...common} rows={4} placeholder={f.placeholder} maxLength={f.max_length} value={text} onChange={(e) => set(f.key, e.target.value)} />
      ) : f.type === 'int' ? (
        <input
          {...common}
          type="number"
          inputMode="numeric"
          step={1}
          min={f.min}
          max={f.max}
          placeholder={f.placeholder}
          value={text}
          onChange={(e) => set(f.key, e.target.value)}
        />
      ) : (
        <input
          {...common}
          type={f.type === 'password' ? 'password' : f.type === 'date' ? 'date' : 'text'}
          autoComplete={f.type === 'password' ? 'off' : undefined}
          placeholder={f.placeholder}
          maxLength={f.max_length}
          value={text}
          onChange={(e) => set(f.key, e.target.value)}
        />
      );
    return labelled(f.key, label, required, control, f.help);
  };

  const node = (n: SurfaceNode, i: number): ReactNode => {
    const k = n.id ?? `${n.type}-${i}`;
    switch (n.type) {
      case 'text':
        return n.style === 'title' ? (
          <h3 key={k} className="app-text title">
            {n.text}
          </h3>
        ) : (
          <p key={k} className={`app-text ${n.style ?? 'body'}`}>
            {n.text}
          </p>
        );
      case 'form':
        return (
          <div key={k} className="app-form">
            {n.fields.map(field)}
          </div>
        );
      case 'steps':
        return (
          <ol key={k} className="app-steps">
            {n.steps.map((s, j) => (
              <li key={j} aria-current={j === (n.current ?? 0) ? 'step' : undefined} className={j < (n.current ?? 0) ? 'done' : undefined}>
                {s}
              </li>
            ))}
          </ol>
        );
      case 'list':
        return (
          <ul key={k} className="app-list">
            {n.items.map((it, j) => (
              <li key={it.id ?? j}>
                <span className="title">{it.title}</span>
                {it.subtitle && <span className="muted"> · {it.subtitle}</span>}
              </li>
            ))}
          </ul>
        );
      case 'progress':
        return (
          <div key={k} className="app-progress">
            {n.label && <span>{n.label}</span>}
            <progress max={1} value={n.value ?? undefined} aria-label={n.label ?? t('apps.progress')} />
          </div>
        );
      case 'people-picker':
        return labelled(
          n.key,
          n.label ?? n.key,
          !!n.required,
          <PeoplePicker
            label={n.label ?? n.key}
            multi={n.multi}
            value={values[n.key]}
            onChange={(v) => set(n.key, v)}
            search={searchPeople}
            describedBy={errorOf(n.key) ? ids(n.key).msg : undefined}
          />,
        );
      case 'pin-input':
        return labelled(
          n.key,
          n.label ?? n.key,
          !!n.required,
          <input
            id={ids(n.key).input}
            className="pin"
            inputMode="numeric"
            autoComplete="one-time-code"
            pattern="[0-9]*"
            maxLength={n.length ?? 12}
            size={n.length ?? 6}
            aria-required={n.required || undefined}
            aria-invalid={!!errorOf(n.key) || undefined}
            value={typeof values[n.key] === 'string' ? (values[n.key] as string) : ''}
            onChange={(e) => set(n.key, e.target.value.replace(/\D/g, ''))}
          />,
        );
      case 'file-chooser':
        return labelled(
          n.key,
          n.label ?? n.key,
          !!n.required,
          <FileChooserInput
            label={n.label ?? n.key}
            multi={n.multi}
            kind={n.kind}
            ext={n.ext}
            value={values[n.key]}
            onChange={(v) => set(n.key, v)}
            Chooser={FileChooser}
          />,
        );
      case 'pdf-fields':
        return (
          <PdfFields
            key={k}
            fields={n.fields ?? []}
            value={values[n.key ?? 'pdf_fields']}
            onChange={(v) => set(n.key ?? 'pdf_fields', v)}
            docUrl={fileUrl?.(n.path)}
            errorOf={(fk) => errorOf(fk)}
          />
        );
      case 'signature-pad':
        return labelled(
          n.key,
          n.label ?? n.key,
          !!n.required,
          <SignaturePad
            label={n.label ?? n.key}
            value={values[n.key]}
            onChange={(v) => set(n.key, v)}
            describedBy={errorOf(n.key) ? ids(n.key).msg : undefined}
          />,
        );
      case 'preview':
        return fileUrl ? <PreviewNode key={k} url={fileUrl(n.path)} name={n.path.slice(n.path.lastIndexOf('/') + 1)} /> : null;
      case 'divider':
        return <hr key={k} />;
      case 'row':
        return (
          <div key={k} className="app-row">
            {n.children.map(node)}
          </div>
        );
      default:
        return null;
    }
  };

  return (
    <form
      className="surface"
      noValidate
      aria-busy={busy || undefined}
      onSubmit={(e) => {
        e.preventDefault();
        if (primary && !busy) send('submit', primary.id);
      }}
    >
      {nodes.map(node)}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {surface.footer.length > 0 && (
        <div className="actions">
          {surface.footer.map((b) => (
            <button
              key={b.id}
              type={b.primary ? 'submit' : 'button'}
              disabled={busy}
              className={b.danger ? 'danger' : b.primary ? 'primary' : undefined}
              onClick={b.primary ? undefined : () => send('action', b.id)}
            >
              {b.label}
            </button>
          ))}
        </div>
      )}
    </form>
  );
}

/** An image of the file (its raw bytes), or a link to it when the browser cannot draw it as one. */
function PreviewNode({ url, name }: { url: string; name: string }) {
  const { t } = useI18n();
  const [broken, setBroken] = useState(false);
  return broken ? (
    <p>
      <a href={url} target="_blank" rel="noopener noreferrer">
        {t('apps.preview.open', { name })}
      </a>
    </p>
  ) : (
    <img className="app-preview" src={url} alt={name} onError={() => setBroken(true)} />
  );
}
