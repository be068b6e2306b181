/**
 * The text editor: a transparent textarea over its coloured copy (so the caret,
 * selection, undo and IME stay the browser's own), Ctrl+S saves through save-text.
 */
import { useEffect, useRef, useState } from 'react';
import { fetchSigned, toApiError } from '../api/client';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { errorText, useToast } from '../ui/toast';
import { baseName } from '../lib/ui-path';
import { rawUrl, saveText } from './file-api';
import { Code } from './code-view';

export function TextEditor({ path, etag: openedAt, onSaved, onClose }: { path: string; etag?: string; onSaved: () => void; onClose: () => void }) {
  const { t } = useI18n();
  const toast = useToast();
  const name = baseName(path);
  const [text, setText] = useState<string | null>(null);
  const [saved, setSaved] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const etag = useRef(openedAt);
  const under = useRef<HTMLPreElement>(null);

  useEffect(() => {
    const ctrl = new AbortController();
    fetchSigned(rawUrl(path), { signal: ctrl.signal, cache: 'no-store' })
      .then(async (r) => {
        if (!r.ok) throw await toApiError(r);
        const s = await r.text();
        setText(s);
        setSaved(s);
      })
      .catch((e) => !ctrl.signal.aborted && setError(errorText(e, t)));
    return () => ctrl.abort();
  }, [path, t]);

  const dirty = text !== null && text !== saved;
  const save = async () => {
    if (text === null || busy) return;
    setBusy(true);
    try {
      const r = await saveText(path, text, etag.current);
      etag.current = r?.entry?.etag ?? etag.current;
      setSaved(text);
      toast.info(t('editor.saved'));
      onSaved();
    } catch (e) {
      setError(errorText(e, t));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title={t('editor.title', { name })} onClose={onClose} wide canClose={() => !dirty || confirm(t('editor.discard'))}>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {text === null ? (
        !error && <p aria-busy="true">{t('common.loading')}</p>
      ) : (
        <div className="editor">
          <pre ref={under} className="code" aria-hidden="true">
            <code>
              <Code text={text + '\n'} name={name} />
            </code>
          </pre>
          <textarea
            aria-label={t('editor.title', { name })}
            spellCheck={false}
            value={text}
            autoFocus
            onChange={(e) => setText(e.target.value)}
            onScroll={(e) => {
              under.current!.scrollTop = e.currentTarget.scrollTop;
              under.current!.scrollLeft = e.currentTarget.scrollLeft;
            }}
            onKeyDown={(e) => {
              if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
                e.preventDefault();
                void save();
              }
            }}
          />
        </div>
      )}
      <div className="actions spread">
        <span className="muted" aria-live="polite">
          {dirty ? t('editor.unsaved') : ''}
        </span>
        <span>
          <button type="button" onClick={() => (!dirty || confirm(t('editor.discard'))) && onClose()}>
            {t('common.close')}
          </button>
          <button type="button" className="primary" disabled={!dirty || busy} onClick={() => void save()}>
            {t('common.save')}
          </button>
        </span>
      </div>
    </Dialog>
  );
}
