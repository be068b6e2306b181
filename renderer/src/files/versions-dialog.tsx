/** A file's kept versions (newest first), each restorable; the current content becomes a version itself. */
import { useEffect, useState } from 'react';
import { useI18n } from '../i18n';
import { formatBytes, formatDate } from '../lib/format';
import { baseName } from '../lib/ui-path';
import { Dialog } from '../ui/dialog';
import { errorText, useToast } from '../ui/toast';
import { listVersions, restoreVersion, type VersionView } from './trash-api';

export function VersionsDialog({ path, onRestored, onClose }: { path: string; onRestored: () => void; onClose: () => void }) {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [rows, setRows] = useState<VersionView[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const load = () => listVersions(path).then((r) => setRows(r.versions), setError);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => void load(), [path]);

  const restore = async (v: VersionView) => {
    setBusy(true);
    try {
      await restoreVersion(path, v.id);
      toast.info(t('versions.restored'));
      onRestored();
      await load();
    } catch (e) {
      toast.error(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title={t('versions.title', { name: baseName(path) })} onClose={onClose} wide>
      <p className="hint">{t('versions.intro')}</p>
      {error ? <p className="error" role="alert">{errorText(error, t)}</p> : null}
      {rows && rows.length === 0 && <p className="empty">{t('versions.empty')}</p>}
      {rows && rows.length > 0 && (
        <div className="table-wrap">
          <table className="table" data-testid="versions-table">
            <thead>
              <tr>
                <th scope="col">{t('versions.when')}</th>
                <th scope="col">{t('versions.size')}</th>
                <th scope="col"><span className="sr-only">{t('versions.restore')}</span></th>
              </tr>
            </thead>
            <tbody>
              {rows.map((v, i) => (
                <tr key={v.id}>
                  <td>{formatDate(v.created_at, lang)}</td>
                  <td>{formatBytes(v.size)}</td>
                  <td><button type="button" className="small" data-autofocus={i === 0 || undefined} disabled={busy} onClick={() => void restore(v)}>{t('versions.restore')}</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Dialog>
  );
}
