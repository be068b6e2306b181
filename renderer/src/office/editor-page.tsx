/**
 * The office editor page, `/edit?path=<ui path>` (its own lazy chunk): fetches
 * the signed editor descriptor (`GET /api/files/docserver/config`), loads the
 * document server's `api.js` and hands the config to `new DocsAPI.DocEditor`,
 * full-window under a slim bar with a back button to the file's folder. The
 * document server itself fetches the file and saves through its callback; this
 * page never touches the bytes. Refusals (415, not configured, 403) show the
 * envelope's message.
 */
import { useEffect, useRef, useState } from 'react';
import { api } from '../api/client';
import type { DocserverEditor } from '../api/types';
import { useI18n } from '../i18n';
import { navigate } from '../lib/router';
import { baseName, parentPath, routeOf } from '../lib/ui-path';
import { errorText } from '../ui/toast';

interface DocEditorInstance {
  destroyEditor?: () => void;
}
declare global {
  interface Window {
    DocsAPI?: { DocEditor: new (placeholderId: string, config: Record<string, unknown>) => DocEditorInstance };
  }
}

/** Loads `src` once per page (the script defines `window.DocsAPI`). */
const scripts = new Map<string, Promise<void>>();
function loadScript(src: string): Promise<void> {
  let p = scripts.get(src);
  if (!p) {
    p = new Promise<void>((resolve, reject) => {
      const s = document.createElement('script');
      s.src = src;
      s.async = true;
      s.onload = () => resolve();
      s.onerror = () => {
        scripts.delete(src);
        s.remove();
        reject(new Error(src));
      };
      document.head.append(s);
    });
    scripts.set(src, p);
  }
  return p;
}

export default function EditorPage() {
  const { t } = useI18n();
  const path = new URLSearchParams(location.search).get('path') ?? '';
  const host = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [mode, setMode] = useState<'loading' | 'edit' | 'view'>('loading');
  const back = () => navigate(routeOf(parentPath(path) || '/'));

  // biome-ignore lint/correctness/useExhaustiveDependencies: The page is per path; `t` changing (language) does not reopen the document
  useEffect(() => {
    let live = true;
    let editor: DocEditorInstance | null = null;
    setError(null);
    setMode('loading');
    (async () => {
      const d = await api<DocserverEditor>('/api/files/docserver/config', { query: { path } });
      try {
        await loadScript(d.api_url);
      } catch {
        throw new Error(t('office.script_failed', { url: d.docserver_url }));
      }
      if (!live || !host.current) return;
      if (!window.DocsAPI) throw new Error(t('office.script_failed', { url: d.docserver_url }));
      // The editor replaces its placeholder with its own frame: a node React does not manage.
      const slot = document.createElement('div');
      slot.id = `office-editor-${d.node_id}`;
      host.current.replaceChildren(slot);
      editor = new window.DocsAPI.DocEditor(slot.id, {
        ...d.config,
        width: '100%',
        height: '100%',
        events: { onRequestClose: back },
      });
      setMode(d.edit ? 'edit' : 'view');
    })().catch((e) => live && setError(errorText(e, t)));
    return () => {
      live = false;
      editor?.destroyEditor?.();
    };
  }, [path]);

  return (
    <div className="office-page">
      <header className="office-bar">
        <button type="button" onClick={back}>
          ← {t('office.back')}
        </button>
        <h1>{baseName(path) || t('office.title')}</h1>
        {mode === 'view' && (
          <span className="muted" data-testid="office-view-only">
            {t('office.view_only')}
          </span>
        )}
      </header>
      {error && (
        <p className="error office-error" role="alert">
          {error}
        </p>
      )}
      {!error && mode === 'loading' && (
        <p aria-busy="true" className="office-error">
          {t('common.loading')}
        </p>
      )}
      <div className="office-frame" ref={host} data-testid="office-frame" hidden={!!error} />
    </div>
  );
}
