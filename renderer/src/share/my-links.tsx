/** The caller's links: what they point at, uses against the cap, expiry, status, revoke, re-enable after a suspension. */
import { useEffect, useState } from 'react';
import type { Share } from '../api/types';
import { useI18n } from '../i18n';
import { formatDate } from '../lib/format';
import { fromSharePath } from '../lib/ui-path';
import { ConfirmDialog } from '../ui/forms';
import { errorText, useToast } from '../ui/toast';
import { myShares, resumeShare, revokeShare } from './share-api';
import { linkStatus } from './link-status';

export function MyLinks() {
  const { t, lang } = useI18n();
  const toast = useToast();
  const [rows, setRows] = useState<Share[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [revoking, setRevoking] = useState<Share | null>(null);
  const load = () => myShares().then(setRows, setError);
  const copy = async (url: string) => {
    try {
      await navigator.clipboard.writeText(url);
      toast.info(t('links.copied'));
    } catch {
      // Plain-HTTP LAN pages have no async clipboard: fall back to a selected, off-screen field and the copy command.
      const f = Object.assign(document.createElement('textarea'), { value: url, className: 'sr-only' });
      document.body.append(f);
      f.select();
      const ok = document.execCommand('copy');
      f.remove();
      if (!ok) return toast.error(new Error(url));
      toast.info(t('links.copied'));
    }
  };
  useEffect(() => void load(), []);

  return (
    <section className="page">
      <h1>{t('links.title')}</h1>
      {error ? (
        <p className="error" role="alert">
          {errorText(error, t)}
        </p>
      ) : null}
      {rows && rows.length === 0 && <p className="empty">{t('links.empty')}</p>}
      {rows && rows.length > 0 && (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">{t('links.path')}</th>
                <th scope="col">{t('links.kind')}</th>
                <th scope="col">{t('links.downloads')}</th>
                <th scope="col">{t('links.expires')}</th>
                <th scope="col">{t('links.status')}</th>
                <th scope="col">
                  <span className="sr-only">{t('links.revoke')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((s) => {
                const st = linkStatus(s);
                return (
                  <tr key={s.id}>
                    <td>
                      <a href={s.url} target="_blank" rel="noreferrer">
                        {fromSharePath(s.path)}
                      </a>
                      {s.requires_pin && (
                        <>
                          {' '}
                          <span className="pill">{t('share.pin.value')}</span>
                        </>
                      )}
                      {s.comment && <div className="muted">{s.comment}</div>}
                    </td>
                    <td>{t(s.kind === 'drop' ? 'links.kind.drop' : 'links.kind.share')}</td>
                    <td>
                      {s.kind === 'drop' ? (
                        <DropUses s={s} />
                      ) : (
                        <>
                          {s.downloads ?? 0}
                          {s.max_downloads ? ` / ${s.max_downloads}` : ''}
                        </>
                      )}
                    </td>
                    <td>{s.expires_at ? formatDate(s.expires_at, lang) : t('common.never')}</td>
                    <td>
                      <span className={`pill ${st}`}>{t(`links.status.${st}`)}</span>
                      {st === 'suspended' && (
                        <div className="muted">{t(s.suspended_reason === 'accelerator' ? 'links.suspended.accelerator' : 'links.suspended.addresses')}</div>
                      )}
                    </td>
                    <td>
                      <div className="row-actions">
                        {st === 'active' && (
                          <button type="button" className="small" onClick={() => void copy(s.url)}>
                            {t('links.copy')}
                          </button>
                        )}
                        {st === 'suspended' && (
                          <button
                            type="button"
                            className="small"
                            onClick={() => void resumeShare(s.id).then(() => (toast.info(t('links.resumed')), load()), toast.error)}
                          >
                            {t('links.resume')}
                          </button>
                        )}
                        {(st === 'active' || st === 'suspended') && (
                          <button type="button" className="danger small" onClick={() => setRevoking(s)}>
                            {t('links.revoke')}
                          </button>
                        )}
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {revoking && (
        <ConfirmDialog
          title={t('links.revoke')}
          text={t('links.confirm_revoke')}
          confirmLabel={t('links.revoke')}
          danger
          onClose={() => setRevoking(null)}
          onConfirm={() => void revokeShare(revoking.id).then(load, toast.error)}
        />
      )}
    </section>
  );
}

/** A file request's uses are its submissions (one visit may send many files); the files received stand below, against the cap. */
function DropUses({ s }: { s: Share }) {
  const { t } = useI18n();
  const n = s.uploads ?? 0;
  return (
    <>
      {s.submissions ?? 0}
      <div className="muted">{s.max_uploads ? t('links.files_received.cap', { n, max: s.max_uploads }) : t('links.files_received', { n })}</div>
    </>
  );
}
