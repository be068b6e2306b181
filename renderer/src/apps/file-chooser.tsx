/**
 * The signed-in file chooser of a surface's `file-chooser`: folders through
 * the existing folder picker, files through a small browser over the listing
 * API (folders to walk into, the files that fit `ext` to tick).
 */
import { useEffect, useState } from 'react';
import type { Entry } from '../api/types';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { errorText } from '../ui/toast';
import { crumbs, joinPath, parentPath, uiPathOfRoute } from '../lib/ui-path';
import { listFolder } from '../files/file-api';
import { FolderPicker } from '../files/folder-picker';
import { FileIcon } from '../files/icons';
import type { FileChooserProps } from './surface/widgets';
import { withoutBase } from '../lib/base';

export function AppFileChooser(p: FileChooserProps) {
  if (p.kind === 'dir')
    return <FolderPicker title={p.title} start={uiPathOfRoute(withoutBase(location.pathname))} onPick={(d) => p.onPick([d])} onClose={p.onClose} />;
  return <FilePicker {...p} />;
}

function FilePicker({ title, multi, ext, onPick, onClose }: FileChooserProps) {
  const { t } = useI18n();
  const [dir, setDir] = useState(() => uiPathOfRoute(withoutBase(location.pathname)));
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [chosen, setChosen] = useState<string[]>([]);
  useEffect(() => {
    const ctrl = new AbortController();
    setEntries(null);
    setError(null);
    listFolder({ path: dir, sort: 'name', dir: 'asc', limit: 1000 }, ctrl.signal)
      .then((l) =>
        setEntries(l.entries.filter((e) => e.type === 'dir' || !ext?.length || ext.includes(e.name.slice(e.name.lastIndexOf('.') + 1).toLowerCase()))),
      )
      .catch((e) => !ctrl.signal.aborted && setError(errorText(e, t)));
    return () => ctrl.abort();
  }, [dir, ext, t]);
  const toggle = (p: string) => setChosen((c) => (c.includes(p) ? c.filter((x) => x !== p) : multi ? [...c, p] : [p]));
  return (
    <Dialog title={title} onClose={onClose}>
      <p className="picker-path">
        <button type="button" className="link" onClick={() => setDir('/')}>
          {t('files.root')}
        </button>
        {crumbs(dir).map((c) => (
          <span key={c.path}>
            {' '}
            /{' '}
            <button type="button" className="link" onClick={() => setDir(c.path)}>
              {c.name}
            </button>
          </span>
        ))}
      </p>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <ul className="picker" aria-busy={entries === null}>
        {dir !== '/' && (
          <li>
            <button type="button" onClick={() => setDir(parentPath(dir))}>
              ..
            </button>
          </li>
        )}
        {entries?.map((e) => {
          const p = joinPath(dir, e.name);
          return (
            <li key={e.name}>
              {e.type === 'dir' ? (
                <button type="button" onClick={() => setDir(p)}>
                  <FileIcon entry={e} /> {e.name}
                </button>
              ) : (
                <label className="check">
                  <input type={multi ? 'checkbox' : 'radio'} name="app-file" checked={chosen.includes(p)} onChange={() => toggle(p)} /> <FileIcon entry={e} />{' '}
                  {e.name}
                </label>
              )}
            </li>
          );
        })}
      </ul>
      <div className="actions">
        <button type="button" onClick={onClose}>
          {t('common.cancel')}
        </button>
        <button
          type="button"
          className="primary"
          disabled={!chosen.length}
          onClick={() => {
            onPick(chosen);
            onClose();
          }}
        >
          {t('apps.files.pick')}
        </button>
      </div>
    </Dialog>
  );
}
