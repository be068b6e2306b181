/**
 * The surface's richer inputs: the signature pad (a canvas drawn with pointer
 * events; its value a PNG data URL), the people picker (the app's user search),
 * the PIN input, the file chooser (the caller's own picker) and the PDF fields.
 */
import { useEffect, useRef, useState, type ComponentType } from 'react';
import { useI18n } from '../../i18n';
import { Dialog } from '../../ui/dialog';
import type { PdfField, Value } from './types';

export interface Person {
  id: number | string;
  username: string;
  email?: string;
}

export function SignaturePad({ label, value, onChange, describedBy }: { label: string; value: Value; onChange: (v: string) => void; describedBy?: string }) {
  const { t } = useI18n();
  const canvas = useRef<HTMLCanvasElement>(null);
  const drawing = useRef(false);
  const dirty = useRef(false);
  useEffect(() => {
    // A value arriving from outside (a fresh surface) starts a blank pad.
    if (!value) canvas.current?.getContext('2d')?.clearRect(0, 0, canvas.current.width, canvas.current.height);
  }, [value]);
  const point = (e: React.PointerEvent<HTMLCanvasElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    return [((e.clientX - r.left) * e.currentTarget.width) / r.width, ((e.clientY - r.top) * e.currentTarget.height) / r.height] as const;
  };
  return (
    <div className="signature-pad">
      <canvas
        ref={canvas}
        width={480}
        height={160}
        role="img"
        aria-label={label}
        aria-describedby={describedBy}
        onPointerDown={(e) => {
          e.currentTarget.setPointerCapture(e.pointerId);
          const ctx = e.currentTarget.getContext('2d')!;
          ctx.lineWidth = 2.5;
          ctx.lineCap = 'round';
          ctx.strokeStyle = '#111';
          ctx.beginPath();
          ctx.moveTo(...point(e));
          drawing.current = true;
        }}
        onPointerMove={(e) => {
          if (!drawing.current) return;
          const ctx = e.currentTarget.getContext('2d')!;
          ctx.lineTo(...point(e));
          ctx.stroke();
          dirty.current = true;
        }}
        onPointerUp={(e) => {
          drawing.current = false;
          if (dirty.current) onChange(e.currentTarget.toDataURL('image/png'));
        }}
      />
      <button
        type="button"
        onClick={() => {
          const c = canvas.current!;
          c.getContext('2d')!.clearRect(0, 0, c.width, c.height);
          dirty.current = false;
          onChange('');
        }}
      >
        {t('apps.signature.clear')}
      </button>
    </div>
  );
}

/** Search as you type (after a short pause), pick one or several people; the value is their ids as text. */
export function PeoplePicker({
  label,
  multi,
  value,
  onChange,
  search,
  describedBy,
}: {
  label: string;
  multi?: boolean;
  value: Value;
  onChange: (v: string[] | string) => void;
  search?: (q: string) => Promise<Person[]>;
  describedBy?: string;
}) {
  const { t } = useI18n();
  const [q, setQ] = useState('');
  const [found, setFound] = useState<Person[]>([]);
  const [names, setNames] = useState<Record<string, string>>({});
  const chosen = Array.isArray(value) ? value : typeof value === 'string' && value ? [value] : [];
  useEffect(() => {
    if (!search || q.trim().length < 1) return setFound([]);
    let live = true;
    const h = setTimeout(
      () =>
        search(q.trim()).then(
          (l) => live && setFound(l),
          () => live && setFound([]),
        ),
      250,
    );
    return () => {
      live = false;
      clearTimeout(h);
    };
  }, [q, search]);
  const set = (ids: string[]) => onChange(multi ? ids : (ids[ids.length - 1] ?? ''));
  return (
    <div className="people-picker">
      {chosen.length > 0 && (
        <ul className="chips" aria-label={label}>
          {chosen.map((id) => (
            <li key={id} className="chip">
              {names[id] ?? id}
              <button
                type="button"
                className="icon-btn"
                aria-label={t('apps.people.remove', { name: names[id] ?? id })}
                onClick={() => set(chosen.filter((x) => x !== id))}
              >
                ✕
              </button>
            </li>
          ))}
        </ul>
      )}
      <input
        type="search"
        aria-label={label}
        aria-describedby={describedBy}
        placeholder={t('apps.people.search')}
        value={q}
        disabled={!search}
        onChange={(e) => setQ(e.target.value)}
      />
      {found.length > 0 && (
        <ul className="picker">
          {found.map((p) => (
            <li key={p.id}>
              <button
                type="button"
                onClick={() => {
                  const id = String(p.id);
                  setNames((n) => ({ ...n, [id]: p.username }));
                  set(chosen.includes(id) ? chosen : [...chosen, id]);
                  setQ('');
                }}
              >
                {p.username}
                {p.email ? <span className="muted"> · {p.email}</span> : null}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export interface FileChooserProps {
  title: string;
  multi?: boolean;
  kind?: 'file' | 'dir';
  ext?: string[];
  onPick: (paths: string[]) => void;
  onClose: () => void;
}

export function FileChooserInput({
  label,
  multi,
  kind,
  ext,
  value,
  onChange,
  Chooser,
  describedBy,
}: {
  label: string;
  multi?: boolean;
  kind?: 'file' | 'dir';
  ext?: string[];
  value: Value;
  onChange: (v: string[] | string) => void;
  Chooser?: ComponentType<FileChooserProps>;
  describedBy?: string;
}) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const chosen = Array.isArray(value) ? value : typeof value === 'string' && value ? [value] : [];
  return (
    <div className="file-chooser">
      <button type="button" aria-describedby={describedBy} disabled={!Chooser} onClick={() => setOpen(true)}>
        {t('apps.files.choose')}
      </button>{' '}
      <span className="muted">{chosen.length ? chosen.map((p) => p.slice(p.lastIndexOf('/') + 1)).join(', ') : t('apps.files.none')}</span>
      {open && Chooser && (
        <Chooser
          title={label}
          multi={multi}
          kind={kind}
          ext={ext}
          onPick={(paths) => onChange(multi ? paths : (paths[0] ?? ''))}
          onClose={() => setOpen(false)}
        />
      )}
    </div>
  );
}

/** The fields of a PDF as labelled inputs, page by page (a signature field opens the pad); the value maps field keys to values. */
export function PdfFields({
  fields,
  value,
  onChange,
  docUrl,
  errorOf,
}: {
  fields: PdfField[];
  value: Value;
  onChange: (v: Record<string, unknown>) => void;
  docUrl?: string;
  errorOf: (key: string) => string | null;
}) {
  const { t } = useI18n();
  const [signing, setSigning] = useState<PdfField | null>(null);
  const [sig, setSig] = useState('');
  const v = (value && typeof value === 'object' && !Array.isArray(value) ? value : {}) as Record<string, unknown>;
  const set = (k: string, x: unknown) => onChange({ ...v, [k]: x });
  const pages = [...new Set(fields.map((f) => f.page))].sort((a, b) => a - b);
  return (
    <div className="pdf-fields">
      {docUrl && (
        <p>
          <a href={docUrl} target="_blank" rel="noopener noreferrer">
            {t('apps.pdf.open')}
          </a>
        </p>
      )}
      {pages.map((page) => (
        <fieldset key={page}>
          <legend>{t('apps.pdf.page', { n: page })}</legend>
          {fields
            .filter((f) => f.page === page)
            .map((f) => {
              const label = f.label ?? f.key;
              const err = errorOf(f.key);
              return (
                <div key={f.key} className="app-field">
                  {f.kind === 'checkbox' ? (
                    <label className="check">
                      <input type="checkbox" checked={v[f.key] === true} onChange={(e) => set(f.key, e.target.checked)} /> {label}
                    </label>
                  ) : f.kind === 'signature' ? (
                    <>
                      <span>
                        {label}
                        {f.required && <span aria-hidden="true"> *</span>}
                      </span>
                      {typeof v[f.key] === 'string' && v[f.key] ? (
                        <img className="signature-thumb" src={v[f.key] as string} alt={t('apps.signature.signed', { label })} />
                      ) : null}
                      <button
                        type="button"
                        onClick={() => {
                          setSig('');
                          setSigning(f);
                        }}
                      >
                        {t('apps.signature.sign')}
                      </button>
                    </>
                  ) : (
                    <label>
                      {label}
                      {f.required && <span aria-hidden="true"> *</span>}
                      <input
                        type={f.kind === 'date' ? 'date' : 'text'}
                        aria-required={f.required || undefined}
                        value={typeof v[f.key] === 'string' ? (v[f.key] as string) : ''}
                        onChange={(e) => set(f.key, e.target.value)}
                      />
                    </label>
                  )}
                  {err && <p className="error">{err}</p>}
                </div>
              );
            })}
        </fieldset>
      ))}
      {signing && (
        <Dialog title={signing.label ?? signing.key} onClose={() => setSigning(null)}>
          <SignaturePad label={signing.label ?? signing.key} value={sig} onChange={setSig} />
          <div className="actions">
            <button type="button" onClick={() => setSigning(null)}>
              {t('common.cancel')}
            </button>
            <button
              type="button"
              className="primary"
              disabled={!sig}
              onClick={() => {
                set(signing.key, sig);
                setSigning(null);
              }}
            >
              {t('apps.signature.done')}
            </button>
          </div>
        </Dialog>
      )}
    </div>
  );
}
