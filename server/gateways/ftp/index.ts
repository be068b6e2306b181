/**
 * The FTPS gateway: an FTP server written on node:net / node:tls (explicit
 * TLS with `AUTH TLS`, `PROT P` data, passive ports only) over the gateway
 * core, on its own port (`SERVICE_FTP_LISTEN`, off when empty). Written
 * rather than taken from npm: ftp-srv's TLS data channel fails with real
 * clients here (RECIPES.md, docs/gateways-ftp.md).
 */
import { createServer, type Socket } from 'node:net';
import { listenOn } from '../listen';
import { createSecureContext } from 'node:tls';
import type { Config } from '../../config';
import type { Logger } from '../../lib/log';
import type { GatewayCore } from '..';
import { loadCert } from './cert';
import { PassivePorts, parsePortRange } from './passive';
import { FtpSession } from './session';

export { isLoopback } from './session';

export interface FtpGateway {
  /** The bound port (useful with port 0). */
  port: number;
  /** SHA-256 fingerprint of the TLS certificate. */
  fingerprint: string;
  /** Stops listening and ends every session. */
  close(): Promise<void>;
}

/** Connections not yet signed in, per address: more are refused before they cost a TLS handshake. */
const MAX_UNSIGNED_PER_IP = 16;

type FtpConfig = Pick<Config, 'ftpListen' | 'ftpPassivePorts' | 'ftpPasvAddress' | 'ftpTlsCert' | 'ftpTlsKey' | 'ftpIdleTimeout'>;

/**
 * Starts the gateway when `SERVICE_FTP_LISTEN` is set and reports it to the
 * registry (where it listens, or why it could not); null when off or failed.
 * Never throws: a gateway that cannot start must not stop the server.
 */
export async function startFtpGateway(o: { config: FtpConfig; core: GatewayCore; stateDir: string; log: Logger }): Promise<FtpGateway | null> {
  const { config, core, log } = o;
  if (!config.ftpListen) return null;
  const report = (listen: string | null, url: string | null, error: string | null) =>
    core.registry.listener({ protocol: 'ftp', enabled: true, listen, url, error });
  try {
    const cert = await loadCert({ certPath: config.ftpTlsCert, keyPath: config.ftpTlsKey, stateDir: o.stateDir });
    const unsigned = new Map<string, number>();
    const ctx = {
      core,
      tls: createSecureContext({ cert: cert.cert, key: cert.key, minVersion: 'TLSv1.2' }),
      ports: new PassivePorts(parsePortRange(config.ftpPassivePorts)),
      pasvAddress: config.ftpPasvAddress,
      idleMs: config.ftpIdleTimeout,
      log,
      signedInOrGone: (ip: string) => {
        const n = (unsigned.get(ip) ?? 1) - 1;
        if (n > 0) unsigned.set(ip, n);
        else unsigned.delete(ip);
      },
    };
    const sockets = new Set<Socket>();
    const server = createServer((sock) => {
      const ip = sock.remoteAddress ?? '';
      const n = unsigned.get(ip) ?? 0;
      if (n >= MAX_UNSIGNED_PER_IP) {
        sock.on('error', () => sock.destroy());
        return void sock.end('421 Too many connections from your address\r\n');
      }
      unsigned.set(ip, n + 1);
      sockets.add(sock);
      sock.once('close', () => sockets.delete(sock));
      new FtpSession(sock, ctx);
    });
    const { port, listen: where, url } = await listenOn(server, config.ftpListen, 'ftp');
    report(where, url, null);
    log.info(`FTPS gateway on ${where} (explicit TLS; certificate SHA-256 ${cert.fingerprint})`);
    return {
      port,
      fingerprint: cert.fingerprint,
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          for (const s of sockets) s.destroy();
        }),
    };
  } catch (e) {
    const msg = (e as Error).message;
    report(null, null, msg);
    log.error(`FTPS gateway not started: ${msg}`);
    return null;
  }
}
