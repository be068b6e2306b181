/**
 * What the gateways report to the admin (`GET /api/admin/gateways`): each
 * protocol's listener (where, or why not) and the clients signed in. SFTP and
 * FTP open and close a session per connection; WebDAV and S3 have none, so a
 * client counts while it made a request in the last IDLE_MS.
 */
import { createHash } from 'node:crypto';
import type { GatewayListenerView, GatewayProtocol, GatewaySessionView, GatewaysStatus } from '../contract';

const IDLE_MS = 5 * 60_000;
const PROTOCOLS: GatewayProtocol[] = ['webdav', 'sftp', 'ftp', 's3', 'nfs'];

interface Session extends GatewaySessionView {
  /** Kept until closed (connection protocols) or until idle (request protocols). */
  open: boolean;
}

export class GatewayRegistry {
  private listeners = new Map<GatewayProtocol, GatewayListenerView>();
  private sessions = new Map<string, Session>();

  /** Records where a protocol listens (or why it does not). */
  listener(view: GatewayListenerView): void {
    this.listeners.set(view.protocol, view);
  }

  /** A connection's session (SFTP, FTP): call the answer when it closes. */
  open(protocol: GatewayProtocol, user: string, ip: string): () => void {
    const id = `${protocol}:${Math.random().toString(36).slice(2)}:${Date.now()}`;
    const now = new Date().toISOString();
    this.sessions.set(id, { protocol, user, ip, since: now, last_active: now, open: true });
    return () => void this.sessions.delete(id);
  }

  /** A request of a connectionless protocol (WebDAV, S3) by `user` from `ip`. */
  touch(protocol: GatewayProtocol, user: string, ip: string): void {
    const id = createHash('sha1').update(`${protocol}\0${user}\0${ip}`).digest('hex');
    const now = new Date().toISOString();
    const s = this.sessions.get(id);
    if (s) s.last_active = now;
    else this.sessions.set(id, { protocol, user, ip, since: now, last_active: now, open: false });
  }

  status(): GatewaysStatus {
    const cutoff = Date.now() - IDLE_MS;
    for (const [id, s] of this.sessions) if (!s.open && Date.parse(s.last_active) < cutoff) this.sessions.delete(id);
    return {
      gateways: PROTOCOLS.map((protocol) => this.listeners.get(protocol) ?? { protocol, enabled: false, listen: null, url: null, error: null }),
      sessions: [...this.sessions.values()].map(({ open: _open, ...v }) => v),
    };
  }
}
