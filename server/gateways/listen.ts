/**
 * Opening a gateway's own listener from its `host:port` / `:port` setting,
 * the same way for SFTP, FTPS and S3.
 */
import type { Server } from 'node:net';

export interface Listening {
  port: number;
  /** Where it listens, for the admin's view (`*` for every address). */
  listen: string;
  /** The address a client on this machine uses, with `scheme` (`sftp`, `ftp`, `http`). */
  url: string;
}

/** Listens on `setting`; rejects when it cannot (a taken port), leaving the server closed. */
export function listenOn(server: Server, setting: string, scheme: string): Promise<Listening> {
  const at = setting.lastIndexOf(':');
  const host = setting.slice(0, at).replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: host || undefined, port: Number(setting.slice(at + 1)) }, () => {
      server.off('error', reject);
      const port = (server.address() as { port: number }).port;
      const bracket = (h: string) => (h.includes(':') ? `[${h}]` : h);
      const shown = !host || host === '0.0.0.0' || host === '::' ? 'localhost' : host;
      resolve({ port, listen: `${host ? bracket(host) : '*'}:${port}`, url: `${scheme}://${bracket(shown)}:${port}` });
    });
  });
}
