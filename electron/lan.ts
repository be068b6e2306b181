/**
 * LAN reach: which address phones should use, its QR code, and announcing the
 * service over mDNS/DNS-SD (`_http._tcp`). The mDNS responder is injected so
 * tests never touch the multicast network.
 */
import type { NetworkInterfaceInfo } from 'node:os';
import QRCode from 'qrcode';

/** Interface names of VPNs, containers and VMs: reachable from this machine only, not from a phone. */
const VIRTUAL = /^(docker|br-|veth|virbr|vmnet|vboxnet|utun|tun|tap|wg|zt|tailscale|lo)/i;

function rank(name: string, a: NetworkInterfaceInfo): number {
  if (a.internal || a.family !== 'IPv4' || a.address.startsWith('169.254.')) return -1;
  let score = VIRTUAL.test(name) ? 1 : 10;
  if (/^192\.168\./.test(a.address)) score += 3;
  else if (/^10\./.test(a.address)) score += 2;
  else if (/^172\.(1[6-9]|2\d|3[01])\./.test(a.address)) score += 1;
  if (/^(en|eth|wl|wi-?fi|wlan|ethernet)/i.test(name)) score += 2;
  return score;
}

/**
 * The IPv4 address LAN devices most likely reach this machine on (a private
 * address of a physical interface first), or null when there is none.
 * Pass `os.networkInterfaces()`.
 */
export function pickLanAddress(interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>): string | null {
  let best: { address: string; score: number } | null = null;
  for (const [name, addrs] of Object.entries(interfaces))
    for (const a of addrs ?? []) {
      const score = rank(name, a);
      if (score > 0 && (!best || score > best.score)) best = { address: a.address, score };
    }
  return best?.address ?? null;
}

/** `http://<address>:<port>` when LAN access is on and an address exists; null otherwise. */
export function lanUrl(lanAccess: boolean, interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>, port: number): string | null {
  if (!lanAccess) return null;
  const address = pickLanAddress(interfaces);
  return address ? `http://${address}:${port}` : null;
}

/** A PNG data URL of a QR code for `text` (about 240 px, medium error correction). */
export function qrDataUrl(text: string): Promise<string> {
  return QRCode.toDataURL(text, { errorCorrectionLevel: 'M', margin: 2, width: 240 });
}

/** The part of bonjour-service's Bonjour the shell uses. */
export interface MdnsResponder {
  publish(service: { name: string; type: string; port: number; txt?: Record<string, string> }): unknown;
  unpublishAll(callback?: () => void): void;
  destroy(callback?: () => void): void;
}

const truthy = (v: string | undefined) => ['1', 'true', 'yes', 'on'].includes((v ?? '').trim().toLowerCase());

/**
 * Whether other devices on the network can use WebDAV: it is on
 * (SERVICE_WEBDAV, default on) and accepts sign-ins over plain HTTP from the
 * network (SERVICE_WEBDAV_ALLOW_HTTP, default off: the server refuses them,
 * since the password would cross the network in clear).
 */
export function webdavOnLan(env: NodeJS.ProcessEnv): boolean {
  return (env.SERVICE_WEBDAV === undefined || truthy(env.SERVICE_WEBDAV)) && truthy(env.SERVICE_WEBDAV_ALLOW_HTTP);
}

/**
 * The WebDAV address the tray copies: on the LAN address when the network may
 * use it, else this computer's (loopback is always accepted); null when
 * WebDAV is off or the server is not listening.
 */
export function webdavUrl(env: NodeJS.ProcessEnv, lan: string | null, port: number | undefined): string | null {
  if (!port || (env.SERVICE_WEBDAV !== undefined && !truthy(env.SERVICE_WEBDAV))) return null;
  return `${lan && webdavOnLan(env) ? lan : `http://localhost:${port}`}/dav/`;
}

/**
 * The SFTP gateway's listener from SERVICE_SFTP_LISTEN (`host:port` or
 * `:port`, empty = off): its port, and whether other devices can reach it
 * (every address, or a host that is not a loopback one). Null when off or
 * unreadable.
 */
export function sftpListener(env: NodeJS.ProcessEnv): { port: number; onLan: boolean } | null {
  return listenerOf(env.SERVICE_SFTP_LISTEN);
}

/** The NFS gateway's listener from SERVICE_NFS_LISTEN, read as `sftpListener` reads its own. */
export function nfsListener(env: NodeJS.ProcessEnv): { port: number; onLan: boolean } | null {
  return listenerOf(env.SERVICE_NFS_LISTEN);
}

function listenerOf(setting: string | undefined): { port: number; onLan: boolean } | null {
  const m = /^(.*):(\d{1,5})$/.exec((setting ?? '').trim());
  if (!m) return null;
  const host = m[1].replace(/^\[|\]$/g, '').toLowerCase();
  return { port: Number(m[2]), onLan: !['127.0.0.1', '::1', 'localhost'].includes(host) };
}

/**
 * The SFTP address the tray copies: `sftp://<LAN address>:<port>/` when the
 * gateway listens beyond this computer and LAN access gives an address, else
 * `sftp://localhost:<port>/`; null when the gateway is off.
 */
export function sftpUrl(env: NodeJS.ProcessEnv, lan: string | null): string | null {
  const l = sftpListener(env);
  if (!l) return null;
  const host = lan && l.onLan ? new URL(lan).hostname : 'localhost';
  return `sftp://${host}:${l.port}/`;
}

/**
 * The NFS address the tray copies, as libnfs (Kodi, `nfs-ls`) reads it:
 * `nfs://<LAN address>/?nfsport=<port>&mountport=<port>&version=3` when the
 * gateway listens beyond this computer and LAN access gives an address, else
 * with `localhost`; null when the gateway is off. libnfs refuses a port in
 * the host part, and MOUNT shares the NFS port. An export's path goes after
 * the host (Admin → Gateways gives whole mount commands per export).
 */
export function nfsUrl(env: NodeJS.ProcessEnv, lan: string | null): string | null {
  const l = nfsListener(env);
  if (!l) return null;
  const host = lan && l.onLan ? new URL(lan).hostname : 'localhost';
  return `nfs://${host}/?nfsport=${l.port}&mountport=${l.port}&version=3`;
}

/**
 * Announces the service as `_http._tcp` with its UI path in TXT, as
 * `_webdav._tcp` (path `/dav/`) when `webdav` (network clients may use it,
 * see `webdavOnLan`), and as `_sftp-ssh._tcp` on `sftpPort` when given (the
 * SFTP gateway listens beyond loopback), and as `_nfs._tcp` on `nfsPort`
 * likewise (no TXT path: exports are the admin's, not one path). Returns a stop function that
 * withdraws the announcements (goodbye packets) and closes the responder;
 * calling it twice is harmless.
 */
export function advertise(
  responder: MdnsResponder,
  o: { name: string; port: number; version: string; webdav?: boolean; sftpPort?: number; nfsPort?: number },
): () => Promise<void> {
  responder.publish({ name: o.name, type: 'http', port: o.port, txt: { path: '/', product: 'filedock', version: o.version } });
  if (o.webdav) responder.publish({ name: o.name, type: 'webdav', port: o.port, txt: { path: '/dav/' } });
  if (o.sftpPort) responder.publish({ name: o.name, type: 'sftp-ssh', port: o.sftpPort });
  if (o.nfsPort) responder.publish({ name: o.name, type: 'nfs', port: o.nfsPort });
  let stopped: Promise<void> | null = null;
  return () =>
    (stopped ??= new Promise<void>((resolve) => {
      responder.unpublishAll(() => responder.destroy(() => resolve()));
    }));
}
