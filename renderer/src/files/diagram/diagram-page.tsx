/**
 * The diagram editor page (`/diagram/<ui path>`, a lazily loaded chunk): the
 * configured draw.io editor in embed mode fills the window under a bar with
 * a back button. The session (drawio-session.ts) speaks the protocol; this
 * page loads the file, and writes what the editor hands back through the
 * file service's own doors: save-text (with the etag the file was opened
 * at, so someone else's change is not overwritten) for .drawio and
 * .drawio.svg, the upload route for .drawio.png. Both keep a version of the
 * replaced bytes and announce `file.updated` through the write gate.
 */
import { useEffect, useRef, useState } from 'react';
import { fetchSigned, toApiError } from '../../api/client';
import { useI18n } from '../../i18n';
import { navigate } from '../../lib/router';
import { baseName, parentPath, routeOf } from '../../lib/ui-path';
import { errorText } from '../../ui/toast';
import { httpTransport } from '../../upload/http-transport';
import { rawUrl, saveText } from '../file-api';
import { diagramEditorUrl, diagramFormat, diagramPathOfRoute } from './diagram-route';
import { DrawioSession, editorUrl, type DiagramFormat, type DiagramWrite } from './drawio-session';

interface Opened {
  url: string;
  content: string;
  etag: string | undefined;
}

/** The file as the editor takes it: XML (an SVG's embedded XML), or a PNG as a data URI. */
async function readDiagram(path: string, format: DiagramFormat): Promise<{ content: string; etag: string | undefined }> {
  const r = await fetchSigned(rawUrl(path), { cache: 'no-store' });
  if (!r.ok) throw await toApiError(r);
  const etag = r.headers.get('ETag') ?? undefined;
  if (format === 'xml') return { content: await r.text(), etag };
  if (format === 'xmlsvg') {
    const text = await r.text();
    // DOMParser builds an inert document: nothing in the file runs.
    const root = text.trim() ? new DOMParser().parseFromString(text, 'image/svg+xml').documentElement : null;
    return { content: root?.getAttribute('content') ?? '', etag };
  }
  const blob = await r.blob();
  if (!blob.size) return { content: '', etag };
  const content = await new Promise<string>((resolve, reject) => {
    const fr = new FileReader();
    fr.onload = () => resolve(String(fr.result));
    fr.onerror = () => reject(fr.error);
    fr.readAsDataURL(new Blob([blob], { type: 'image/png' }));
  });
  return { content, etag };
}

export default function DiagramPage({ pathname }: { pathname: string }) {
  const { t, lang } = useI18n();
  const path = diagramPathOfRoute(pathname);
  const name = baseName(path);
  const format = diagramFormat(name);
  const [opened, setOpened] = useState<Opened | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<'saving' | 'saved' | null>(null);
  const frame = useRef<HTMLIFrameElement>(null);
  const session = useRef<DrawioSession | null>(null);
  const back = () => navigate(routeOf(parentPath(path)));

  useEffect(() => {
    // Not a diagram file (a hand-typed address): the folder it is in.
    if (!format) return navigate(routeOf(parentPath(path)), true);
    let live = true;
    (async () => {
      const url = await diagramEditorUrl();
      if (!url) return live && setError(t('diagram.not_configured'));
      const file = await readDiagram(path, format);
      if (live) setOpened({ url, ...file });
    })().catch((e) => live && setError(errorText(e, t)));
    return () => {
      live = false;
    };
  }, [path, format, t]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `back` and `t` are stable for one path; a new session only for a new file
  useEffect(() => {
    if (!opened || !format) return;
    let etag = opened.etag;
    const write = async (w: DiagramWrite) => {
      if ('text' in w) {
        const r = await saveText(path, w.text, etag);
        etag = r?.entry?.etag ?? etag;
      } else {
        const file = new File([w.bytes as BlobPart], name, { type: 'image/png', lastModified: Date.now() });
        await httpTransport.simple(parentPath(path), file, () => {}, new AbortController().signal);
      }
    };
    const s = new DrawioSession({
      origin: new URL(opened.url).origin,
      format,
      title: name,
      content: opened.content,
      io: {
        post: (m) => frame.current?.contentWindow?.postMessage(JSON.stringify(m), new URL(opened.url).origin),
        write,
        exit: back,
        status: (x) => {
          if (x === 'saved') setError(null);
          if (typeof x === 'string') return setStatus(x);
          setStatus(null);
          setError(errorText(x.error, t));
        },
      },
    });
    session.current = s;
    const onMessage = (e: MessageEvent) => s.handle(e, frame.current?.contentWindow ?? undefined);
    window.addEventListener('message', onMessage);
    return () => {
      window.removeEventListener('message', onMessage);
      void s.flush().finally(() => s.dispose());
      session.current = null;
    };
  }, [opened, format, path, name]);

  return (
    <div className="diagram-page" data-testid="diagram-page">
      <div className="diagram-bar">
        <button type="button" onClick={() => void (session.current?.flush() ?? Promise.resolve()).finally(back)}>
          ← {t('diagram.back')}
        </button>
        <h1>{t('diagram.title', { name })}</h1>
        <span className="muted" role="status" aria-live="polite">
          {status === 'saving' ? t('diagram.saving') : status === 'saved' ? t('diagram.saved') : ''}
        </span>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {opened && <iframe ref={frame} title={t('diagram.editor')} src={editorUrl(opened.url, lang)} allow="clipboard-read; clipboard-write" />}
      {!opened && !error && <p aria-busy="true">{t('common.loading')}</p>}
    </div>
  );
}
