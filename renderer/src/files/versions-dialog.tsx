/**
 * A file's kept versions (newest first): each can be viewed or downloaded
 * first, and restored after a confirmation that says the current content
 * becomes a version itself.
 */
import { useEffect, useState, type MouseEvent } from 'react';
import { useI18n } from '../i18n';
import { formatBytes, formatDateSeconds, formatRelative } from '../lib/format';
import { baseName } from '../lib/ui-path';
import { fetchSigned, toApiError } from '../api/client';
import { deviceKey } from '../device/device-key';
import { saveSigned } from '../device/signed-src';
import { Dialog } from '../ui/dialog';
import { ConfirmDialog } from '../ui/forms';
import { errorText, useToast } from '../ui/toast';
import { listVersions, restoreVersion, versionUrl, type VersionView } from './trash-api';

export function VersionsDialog({ path, onRestored, onClose }: { path: string; onRestored: () => void; onClose: () => void }) {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [rows, setRows] = useState<VersionView[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [asking, setAsking] = useState<VersionView | null>(null);
  const name = baseName(path);
  const load = () => listVersions(path).then((r) => setRows(r.versions), setError);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `load` is a new closure each render; the versions are re-read for a new path only
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
    <Dialog title={t('versions.title', { name })} onClose={onClose} wide>
      <p className="hint">{t('versions.intro')}</p>
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      {rows && rows.length === 0 && <p className="empty">{t('versions.empty')}</p>}
      {rows && rows.length > 0 && (
        <div className="table-wrap">
          <table className="table versions-table" data-testid="versions-table">
            <thead>
              <tr>
                <th scope="col">{t('versions.when')}</th>
                <th scope="col">{t('versions.size')}</th>
                <th scope="col">
                  <span className="sr-only">{t('versions.restore')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((v, i) => (
                <tr key={v.id}>
                  <td>
                    <time dateTime={v.created_at}>{formatDateSeconds(v.created_at, lang)}</time>
                    <span className="muted versions-ago"> · {formatRelative(v.created_at, lang)}</span>
                  </td>
                  <td>{formatBytes(v.size)}</td>
                  <td>
                    <div className="row-actions">
                      <ViewLink url={versionUrl(path, v.id, true)} label={t('versions.view')} />
                      <button type="button" className="small" onClick={() => saveSigned(versionUrl(path, v.id, false), name).catch(toast.error)}>
                        {t('versions.download')}
                      </button>
                      <button type="button" className="small" data-autofocus={i === 0 || undefined} disabled={busy} onClick={() => setAsking(v)}>
                        {t('versions.restore')}
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {asking && (
        <ConfirmDialog
          title={t('versions.confirm_title')}
          text={t('versions.confirm_text', { name, when: formatDateSeconds(asking.created_at, lang), size: formatBytes(asking.size) })}
          confirmLabel={t('versions.restore')}
          onConfirm={() => void restore(asking)}
          onClose={() => setAsking(null)}
        />
      )}
    </Dialog>
  );
}

/** Opens the version in a new tab; in device mode the bytes are fetched with the key on click, into a blob. */
function ViewLink({ url, label }: { url: string; label: string }) {
  const toast = useToast();
  const open = (e: MouseEvent) => {
    if (!deviceKey()) return;
    e.preventDefault();
    const tab = window.open('', '_blank');
    fetchSigned(url)
      .then(async (r) => {
        if (!r.ok) throw await toApiError(r);
        if (tab) tab.location.href = URL.createObjectURL(await r.blob());
      })
      .catch((err) => {
        tab?.close();
        toast.error(err);
      });
  };
  return (
    <a className="button small" href={url} target="_blank" rel="noopener" onClick={open}>
      {label}
    </a>
  );
}
