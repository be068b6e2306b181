/**
 * Admin → Gateways: each protocol's state (listening where, off, or why it
 * failed) from `GET /api/admin/gateways`, its settings (environment only in
 * this version: shown with how to change them), the clients signed in, and
 * the NFS exports (nfs-exports.tsx), and the same connection instructions
 * users see on their Account page.
 */
import { useEffect, useState } from 'react';
import { api } from '../api/client';
import type { GatewayProtocol, GatewaysStatus } from '../../../server/contract';
import { ConnectInstructions, PROTOCOL_NAMES } from '../account/connect-apps';
import { useSession } from '../auth/session';
import { useI18n } from '../i18n';
import { errorText } from '../ui/toast';
import { NfsExports } from './nfs-exports';

/** The settings each gateway reads at start (server/config/schema.ts). */
const SETTINGS: Record<GatewayProtocol, string[]> = {
  webdav: ['SERVICE_WEBDAV', 'SERVICE_WEBDAV_ALLOW_HTTP'],
  sftp: ['SERVICE_SFTP_LISTEN'],
  ftp: ['SERVICE_FTP_LISTEN'],
  s3: ['SERVICE_S3_LISTEN'],
  nfs: ['SERVICE_NFS_LISTEN'],
};

export function GatewaysTab() {
  const { t } = useI18n();
  const { user } = useSession();
  const [status, setStatus] = useState<GatewaysStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => void api<GatewaysStatus>('/api/admin/gateways').then(setStatus, setError), []);
  if (error)
    return (
      <p className="error" role="alert">
        {errorText(error, t)}
      </p>
    );
  if (!status) return <p className="muted">{t('common.loading')}</p>;
  return (
    <div className="settings">
      <section className="card" aria-label={t('gateways.status')}>
        <h2>{t('gateways.status')}</h2>
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th>{t('gateways.protocol')}</th>
                <th>{t('gateways.state')}</th>
                <th>{t('gateways.address')}</th>
                <th>{t('gateways.settings')}</th>
              </tr>
            </thead>
            <tbody>
              {status.gateways.map((g) => (
                <tr key={g.protocol} data-testid={`gateway-${g.protocol}`}>
                  <td>{PROTOCOL_NAMES[g.protocol]}</td>
                  <td>
                    {g.error ? <span className="error">{t('gateways.failed', { error: g.error })}</span> : g.enabled ? t('gateways.on') : t('gateways.off')}
                  </td>
                  <td>{g.url ?? g.listen ?? '—'}</td>
                  <td>
                    <code>{SETTINGS[g.protocol].join(', ')}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p className="hint">{t('gateways.settings_hint')}</p>
      </section>
      <section className="card" aria-label={t('gateways.sessions')}>
        <h2>{t('gateways.sessions')}</h2>
        {status.sessions.length === 0 ? (
          <p className="muted">{t('gateways.no_sessions')}</p>
        ) : (
          <div className="table-wrap">
            <table className="table">
              <thead>
                <tr>
                  <th>{t('gateways.protocol')}</th>
                  <th>{t('gateways.user')}</th>
                  <th>{t('gateways.ip')}</th>
                  <th>{t('gateways.last_active')}</th>
                </tr>
              </thead>
              <tbody>
                {status.sessions.map((s) => (
                  <tr key={`${s.protocol}-${s.user}-${s.ip}-${s.since}`}>
                    <td>{PROTOCOL_NAMES[s.protocol]}</td>
                    <td>{s.user}</td>
                    <td>{s.ip}</td>
                    <td>{new Date(s.last_active).toLocaleString()}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <NfsExports gateway={status.gateways.find((g) => g.protocol === 'nfs')} sessions={status.sessions} />
      <section className="card" aria-label={t('gateways.instructions')}>
        <h2>{t('gateways.instructions')}</h2>
        <p>{t('connect.credentials')}</p>
        <ConnectInstructions addresses={status.gateways} user={user.username} />
      </section>
    </div>
  );
}
