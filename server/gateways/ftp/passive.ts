/**
 * Passive data connections. Each PASV / EPSV opens a listener on a port of
 * the configured range (or any free port), accepts exactly one connection,
 * and only from the control connection's address (another host cannot steal
 * the transfer), then closes. With PROT P the accepted socket is wrapped in
 * TLS with the control connection's certificate and handed out once its
 * handshake is done. A listener nobody connects to closes after ACCEPT_MS.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { TLSSocket, type SecureContext } from 'node:tls';
import { AppError } from '../../errors';

const ACCEPT_MS = 30_000;

/** Parses `SERVICE_FTP_PASSIVE_PORTS` (`50000-50100` or one port); '' → any free port. Throws on a bad range. */
export function parsePortRange(raw: string): { min: number; max: number } | null {
  if (raw.trim() === '') return null;
  const m = /^\s*(\d{1,5})\s*(?:-\s*(\d{1,5}))?\s*$/.exec(raw);
  const min = Number(m?.[1]);
  const max = Number(m?.[2] ?? m?.[1]);
  if (!m || min < 1 || max > 65535 || min > max) throw new Error(`SERVICE_FTP_PASSIVE_PORTS: "${raw}" is not a port range such as 50000-50100`);
  return { min, max };
}

/** Hands out passive ports round-robin so a just-closed port is not the next one tried. */
export class PassivePorts {
  private cursor = 0;

  constructor(private range: { min: number; max: number } | null) {}

  /** A listener on `host` at a free port of the range; a range with none free is `server_busy`. */
  async listen(host: string): Promise<Server> {
    if (!this.range) return bind(host, 0);
    const size = this.range.max - this.range.min + 1;
    for (let i = 0; i < size; i++) {
      const port = this.range.min + ((this.cursor + i) % size);
      try {
        const s = await bind(host, port);
        this.cursor = (this.cursor + i + 1) % size;
        return s;
      } catch {
        /* taken: try the next one */
      }
    }
    throw new AppError('server_busy', {}, undefined, 'every passive port is in use');
  }
}

function bind(host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer({ pauseOnConnect: true });
    s.once('error', reject);
    s.listen({ host, port, exclusive: true }, () => {
      s.off('error', reject);
      resolve(s);
    });
  });
}

/** One passive listener and the connection it accepts. */
export class DataChannel {
  private accepted: Promise<Socket>;
  private socket: Socket | null = null;
  private timer: NodeJS.Timeout;

  /** `tls()` is asked at accept time: PROT may be given after PASV. */
  constructor(
    private server: Server,
    peerIp: string,
    tls: () => SecureContext | null,
  ) {
    this.accepted = new Promise((resolve, reject) => {
      server.on('connection', (raw: Socket) => {
        if (raw.remoteAddress !== peerIp || this.socket) return void raw.destroy();
        server.close();
        clearTimeout(this.timer);
        const ctx = tls();
        const sock = ctx ? new TLSSocket(raw, { isServer: true, secureContext: ctx }) : raw;
        this.socket = sock;
        // A peer may reset the connection at any time: never an unhandled 'error'.
        sock.on('error', () => sock.destroy());
        raw.resume();
        if (!ctx) return resolve(sock);
        // Handed out only once the handshake is done: some clients (lftp) start it after the 150
        // reply, and ending a TLS socket before its handshake (an empty listing or file) drops it.
        sock.once('secure', () => resolve(sock));
        sock.once('error', reject);
        sock.once('close', () => reject(new AppError('cancelled', {}, undefined, 'data connection closed during the TLS handshake')));
      });
      server.on('close', () => {
        clearTimeout(this.timer);
        if (!this.socket) reject(new AppError('timeout', {}, undefined, 'no data connection'));
      });
    });
    this.accepted.catch(() => {});
    this.timer = setTimeout(() => server.close(), ACCEPT_MS);
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  /** The accepted connection; rejects when none came in time or the channel was closed. */
  connection(): Promise<Socket> {
    return this.accepted;
  }

  /** Stops listening and drops the connection, if any. */
  close(): void {
    clearTimeout(this.timer);
    if (this.server.listening) this.server.close();
    this.socket?.destroy();
  }
}
