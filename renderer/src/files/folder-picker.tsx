/** Choose a destination folder for copy and move: browse folders only, starting at the open one. */
import { useEffect, useState } from 'react';
import type { Entry } from '../api/types';
import { useI18n } from '../i18n';
import { Dialog } from '../ui/dialog';
import { errorText } from '../ui/toast';
import { crumbs, joinPath, parentPath } from '../lib/ui-path';
import { listFolder } from './file-api';
import { isCipherRow } from '../vault/vault-paths';
import { FileIcon } from './icons';

export function FolderPicker({ title, start, onPick, onClose }: { title: string; start: string; onPick: (dir: string) => void; onClose: () => void }) {
  const { t } = useI18n();
  const [dir, setDir] = useState(start);
  const [dirs, setDirs] = useState<Entry[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const ctrl = new AbortController();
    setDirs(null);
    setError(null);
    listFolder({ path: dir, sort: 'name', dir: 'asc', limit: 1000 }, ctrl.signal)
      .then((l) => setDirs(l.entries.filter((e) => e.type === 'dir' && !isCipherRow(e))))
      .catch((e) => !ctrl.signal.aborted && setError(errorText(e, t)));
    return () => ctrl.abort();
  }, [dir, t]);

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
      <ul className="picker" aria-busy={dirs === null}>
        {dir !== '/' && (
          <li>
            <button type="button" onClick={() => setDir(parentPath(dir))}>
              ..
            </button>
          </li>
        )}
        {dirs?.map((d) => (
          <li key={d.name}>
            <button type="button" onClick={() => setDir(joinPath(dir, d.name))}>
              <FileIcon entry={d} /> {d.name}
            </button>
          </li>
        ))}
      </ul>
      <div className="actions">
        <button type="button" onClick={onClose}>
          {t('common.cancel')}
        </button>
        <button
          type="button"
          className="primary"
          disabled={dir === '/'}
          onClick={() => {
            onPick(dir);
            onClose();
          }}
        >
          {t('files.pick_here')}
        </button>
      </div>
    </Dialog>
  );
}
