/**
 * The NFS gateway: NFSv3 and MOUNT v3 (and a portmapper's GETPORT, for
 * clients that ask one) on ONE TCP port, `SERVICE_NFS_LISTEN` (`host:port`,
 * or `:port` for every address; off by default, never the public listener).
 * Exports (nfs_exports) say what is served to which addresses with whose
 * rights. A listener that cannot start is reported, not fatal.
 */
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Actor, ActorSpec } from '../../auth';
import type { Logger } from '../../lib/log';
import { plainAddress } from '../../lib/net-addr';
import type { GatewayCore } from '../index';
import { listenOn } from '../listen';
import { ExportBook } from './book';
import type { NfsExportsRepo } from './exports.repo';
import { Handles } from './handles';
import { mountProgram, MOUNT_PROGRAM } from './mount';
import { nfs3Program, NFS_PROGRAM } from './nfs3';
import { BufferPool } from './pool';
import { OpenReads } from './reads';
import { MAX_RECORD, serveConnection, type Program } from './rpc';
import { StagedFiles } from './writes';
import { XdrWriter } from './xdr';

export { NfsExportsRepo, type NfsExport, type NfsExportInput } from './exports.repo';
export { NfsExports } from './exports.service';

/** Connections at once; more are closed on arrival (each holds buffers and a session). */
export const MAX_CONNECTIONS = 256;
/** A connection with no call for this long is closed (clients reconnect on their own). */
const IDLE_MS = 15 * 60_000;

export interface NfsGateway {
  port: number;
  /** Publishes files being written, stops listening and ends every connection. */
  close(): Promise<void>;
}

export interface NfsDeps {
  listen: string;
  core: GatewayCore;
  exports: NfsExportsRepo;
  secretKey: Buffer;
  stagingDir: string;
  log: Logger;
  restore: (spec: ActorSpec, request: { ip: string; ua: string }) => Promise<Actor>;
}

/** Starts the NFS listener; null when it could not (the reason is in the registry and the log). */
export async function startNfsGateway(d: NfsDeps): Promise<NfsGateway | null> {
  const report = (v: { listen: string | null; url: string | null; error: string | null }) => d.core.registry.listener({ protocol: 'nfs', enabled: true, ...v });
  const stages = new StagedFiles(join(d.stagingDir, 'nfs'), d.log, (id, rel) => d.core.nodes.idAt(id, rel));
  const book = new ExportBook(d.exports, d.core, new Handles(d.secretKey), stages, d.restore);
  // Big WRITE records and READ replies reuse these (a few per connection in flight, 32 MiB kept at most).
  const pool = new BufferPool(MAX_RECORD, 32);
  const reads = new OpenReads(pool);
  stages.onDone = (p) => reads.forget(p);
  const sessions = new WeakMap<object, boolean>();
  const sockets = new Set<Socket>();
  let port = 0;
  const portmap: Program = {
    prog: 100000,
    vers: 2,
    procs: {
      0: () => [],
      // GETPORT: both programs are on this port, over TCP only.
      3: (r) => {
        const prog = r.u32();
        r.u32();
        const tcp = r.u32() === 6;
        return [new XdrWriter(4).u32(tcp && (prog === NFS_PROGRAM || prog === MOUNT_PROGRAM) ? port : 0).done()];
      },
    },
  };

  const server = createServer((socket) => {
    const ip = plainAddress(socket.remoteAddress ?? '');
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.setTimeout(IDLE_MS, () => socket.destroy());
    socket.on('error', (e) => d.log.debug(`nfs: connection from ${ip}: ${e.message}`));
    const conn = { closeSession: null as null | (() => void) };
    socket.on('close', () => {
      sockets.delete(socket);
      conn.closeSession?.();
    });
    const nfs = nfs3Program({
      book,
      stages,
      reads,
      seen: (_ctx, loc) => {
        if (sessions.get(conn)) return;
        sessions.set(conn, true);
        conn.closeSession = d.core.registry.open('nfs', `${loc.tree.who} (${loc.exp.path})`, ip);
      },
    });
    const mount = mountProgram(book, (from, path, ok) =>
      (ok ? d.log.info : d.log.warn).call(d.log, `nfs: mount of ${path} from ${from} ${ok ? 'allowed' : 'refused'}`),
    );
    serveConnection(socket, [nfs, mount, portmap], ip, (why) => d.log.warn(`nfs: closed the connection from ${ip}: ${why}`), pool);
  });
  server.maxConnections = MAX_CONNECTIONS;
  try {
    const l = await listenOn(server, d.listen, 'nfs');
    port = l.port;
    server.on('error', (e: Error) => d.log.warn(`nfs: ${e.message}`));
    report({ listen: l.listen, url: l.url + '/', error: null });
    d.log.info(`nfs gateway on ${l.listen} (NFSv3 and MOUNT on one port)`);
    return {
      port,
      close: async () => {
        await stages.flush();
        reads.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          for (const s of sockets) s.destroy();
        });
      },
    };
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    report({ listen: d.listen, url: null, error });
    d.log.error(`nfs gateway did not start on ${d.listen}: ${error}`);
    return null;
  }
}
