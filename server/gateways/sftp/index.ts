/**
 * The SFTP gateway: started by the server for `SERVICE_SFTP_LISTEN`
 * (`host:port`, or `:port` for every address), reported to the gateway
 * registry with its URL and host key fingerprint, stopped with the server.
 * A listener that cannot start (port taken) is reported, not fatal.
 */
import { listenOn } from '../listen';
import type { Actor } from '../../auth';
import type { Logger } from '../../lib/log';
import type { GatewayCore } from '../index';
import { loadHostKey } from './host-key';
import { createSftpServer, type PublicKeyLookup } from './server';

export type { PublicKeyLookup } from './server';

/** How long a stop waits for open sessions to close. */
const CLOSE_GRACE_MS = 2000;

export interface SftpGateway {
  /** The port it listens on (a `:0` setting gets a free one). */
  port: number;
  fingerprint: string;
  /** Stops listening and ends every open session. */
  close(): Promise<void>;
}

/** Starts the SFTP listener; null when it could not (the reason is in the registry and the log). */
export async function startSftpGateway(d: {
  listen: string;
  hostKeyPath: string;
  core: GatewayCore;
  log: Logger;
  publicKey?: PublicKeyLookup;
  restore: (a: Actor) => Promise<Actor>;
}): Promise<SftpGateway | null> {
  const report = (v: { listen: string | null; url: string | null; error: string | null; fingerprint?: string }) =>
    d.core.registry.listener({ protocol: 'sftp', enabled: true, ...v });
  try {
    const hostKey = loadHostKey(d.hostKeyPath);
    const { server, clients } = createSftpServer({ core: d.core, hostKey, log: d.log, publicKey: d.publicKey, restore: d.restore });
    const { port, listen, url } = await listenOn(server, d.listen, 'sftp');
    server.on('error', (e: Error) => d.log.warn(`sftp: ${e.message}`));
    report({ listen, url: `${url}/`, error: null, fingerprint: hostKey.fingerprint });
    d.log.info(`sftp gateway on ${listen} (host key ${hostKey.fingerprint})`);
    return {
      port,
      fingerprint: hostKey.fingerprint,
      close: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          // Open sessions do not end on their own when the listener stops; a client that never answers is not waited for.
          for (const c of clients) c.end();
          setTimeout(resolve, CLOSE_GRACE_MS).unref();
        }),
    };
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    report({ listen: d.listen, url: null, error });
    d.log.error(`sftp gateway did not start on ${d.listen}: ${error}`);
    return null;
  }
}
