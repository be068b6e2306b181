/**
 * "Connect with a desktop app": the address of each protocol gateway that
 * listens (WebDAV, SFTP, FTPS, S3) with copyable examples for Finder,
 * Windows, GNOME Files, rclone, sftp/lftp and awscli, and which credential to
 * use (the account password, or an API key: required with two-step sign-in,
 * and the only way for S3). Shown on Account → Sessions & keys; the admin's
 * Gateways tab shows the same instructions.
 */
import { useEffect, useState } from 'react';
import { api } from '../api/client';
import type { GatewayAddresses, GatewayProtocol } from '../../../server/contract';
import { useI18n } from '../i18n';
import { CopyField } from '../ui/copy-field';
import { nfsMountCommands } from '../lib/nfs-mount';

type Addresses = GatewayAddresses['gateways'];

/** Where the gateways answer (any signed-in person). */
export const gatewayAddresses = async (): Promise<Addresses> => (await api<GatewayAddresses>('/api/gateways')).gateways;

/** A listener's URL as this browser reaches the server: a wildcard or loopback host becomes the page's host. */
export function reachable(url: string, page: Location = location): string {
  try {
    const u = new URL(url);
    if (['0.0.0.0', '[::]', '127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) u.hostname = page.hostname;
    return u.toString();
  } catch {
    return url;
  }
}

/** The copyable examples for one protocol, or null when it has no address. */
export function examples(
  protocol: GatewayProtocol,
  url: string | null,
  user: string,
  page: Location = location,
): Array<{ label: string; value: string }> | null {
  if (protocol === 'webdav') {
    const dav = `${page.origin}/dav/`;
    const gnome = `${page.protocol === 'https:' ? 'davs' : 'dav'}://${page.host}/dav/`;
    return [
      { label: 'Finder / Windows', value: dav },
      { label: 'GNOME Files', value: gnome },
      {
        label: 'rclone',
        value: `rclone config create filedock webdav url=${page.origin}/dav vendor=other user=${user} pass=$(rclone obscure 'PASSWORD_OR_KEY')`,
      },
    ];
  }
  if (!url) return null;
  const u = new URL(reachable(url, page));
  if (protocol === 'nfs') {
    // Exports are per storage or folder (Admin → Gateways); /STORAGE stands for one of them.
    return nfsMountCommands(u.hostname, u.port || '2049', '/STORAGE');
  }
  if (protocol === 'sftp') {
    return [
      { label: 'sftp', value: `sftp -P ${u.port || 22} ${user}@${u.hostname}` },
      {
        label: 'rclone',
        value: `rclone config create filedock-sftp sftp host=${u.hostname} port=${u.port || 22} user=${user} pass=$(rclone obscure 'PASSWORD_OR_KEY')`,
      },
    ];
  }
  if (protocol === 'ftp') {
    return [
      { label: 'lftp', value: `lftp -e 'set ftp:ssl-force true' -u ${user} ftp://${u.host}` },
      {
        label: 'rclone',
        value: `rclone config create filedock-ftp ftp host=${u.hostname} port=${u.port || 21} explicit_tls=true user=${user} pass=$(rclone obscure 'PASSWORD_OR_KEY')`,
      },
    ];
  }
  const endpoint = u.toString().replace(/\/$/, '');
  return [
    { label: 'awscli', value: `aws --endpoint-url ${endpoint} s3 ls` },
    { label: 'rclone', value: `rclone config create filedock-s3 s3 provider=Other endpoint=${endpoint} access_key_id=ACCESS_KEY_ID secret_access_key=SECRET` },
  ];
}

/** How each protocol is named to people. */
export const PROTOCOL_NAMES: Record<GatewayProtocol, string> = { webdav: 'WebDAV', sftp: 'SFTP', ftp: 'FTPS', s3: 'S3', nfs: 'NFS' };

/** The instructions for every gateway that listens. */
export function ConnectInstructions({ addresses, user }: { addresses: Addresses; user: string }) {
  const { t } = useI18n();
  const on = addresses.filter((g) => g.enabled && examples(g.protocol, g.url, user));
  if (!on.length) return <p className="muted">{t('connect.none')}</p>;
  return (
    <>
      {on.map((g) => (
        <div key={g.protocol} className="connect-protocol" data-testid={`connect-${g.protocol}`}>
          <h3>{PROTOCOL_NAMES[g.protocol]}</h3>
          <p className="hint">{t(`connect.${g.protocol}.hint`)}</p>
          {examples(g.protocol, g.url, user)!.map((x) => (
            <CopyField key={x.label} label={x.label} value={x.value} />
          ))}
        </div>
      ))}
    </>
  );
}

/** The Account card. */
export function ConnectApps({ user }: { user: string }) {
  const { t } = useI18n();
  const [addresses, setAddresses] = useState<Addresses | null>(null);
  const [error, setError] = useState(false);
  useEffect(() => void gatewayAddresses().then(setAddresses, () => setError(true)), []);
  return (
    <section className="card" aria-label={t('connect.title')}>
      <h2>{t('connect.title')}</h2>
      <p>{t('connect.credentials')}</p>
      {error ? (
        <p className="muted">{t('settings.not_available')}</p>
      ) : addresses ? (
        <ConnectInstructions addresses={addresses} user={user} />
      ) : (
        <p className="muted">{t('common.loading')}</p>
      )}
    </section>
  );
}
