/**
 * The SSH side of the SFTP gateway (ssh2's server): sign-in, then only the
 * `sftp` subsystem. Shells, commands, other subsystems, port forwarding in
 * either direction, agent and X11 forwarding are refused. A connection that
 * has not signed in within AUTH_TIMEOUT_MS, or that failed MAX_AUTH_TRIES
 * times, is closed; failed passwords also count in the web sign-in's
 * throttle (per account and per address) through `GatewayAuth`.
 */
import ssh2, { type AuthContext, type Connection, type Server } from 'ssh2';
import type { Actor } from '../../auth';
import type { Logger } from '../../lib/log';
import type { GatewayCore } from '../index';
import type { HostKey } from './host-key';
import { serveSftp, type SftpStats } from './session';

const AUTH_TIMEOUT_MS = 60_000;
const MAX_AUTH_TRIES = 6;
/** Connections at once; more are dropped before the key exchange (each costs a handshake's CPU). */
const MAX_CONNECTIONS = 500;
/** How long a session acts on what it read of its account or key before reading again (disabled, demoted, revoked). */
const FRESH_MS = 1000;

/**
 * Signs in by a registered public key: the actor, or null when `blob` is not
 * a key of `username`'s account. `signed`: the client proved it holds the
 * private key (record the use); else it only asks whether the key would do.
 */
export type PublicKeyLookup = (username: string, blob: Buffer, req: { ip: string; ua: string }, signed: boolean) => Promise<Actor | null>;

export interface SftpServerDeps {
  core: GatewayCore;
  hostKey: HostKey;
  log: Logger;
  /** Public-key sign-in; without it only passwords (and API key tokens as passwords) are offered. */
  publicKey?: PublicKeyLookup;
  /** The actor as it is now (role, permissions); throws when the account is disabled or the key revoked. */
  restore: (a: Actor) => Promise<Actor>;
}

/** An ssh2 server answering only SFTP over `core`'s tree (call `listen` on it), its open connections and its sessions' stats. */
export function createSftpServer(d: SftpServerDeps): { server: Server; clients: Set<Connection>; stats: SftpStats } {
  const methods: AuthContext['method'][] = d.publicKey ? ['publickey', 'password'] : ['password'];
  const clients = new Set<Connection>();
  const stats: SftpStats = { heldPeak: 0 };
  const server = new ssh2.Server({ hostKeys: [d.hostKey.private], ident: 'Filedock' }, (client: Connection, info) => {
    const ip = info.ip;
    clients.add(client);
    client.on('close', () => clients.delete(client));
    let actor: Actor | null = null;
    let tries = 0;
    const req = { ip, ua: `sftp ${info.header.versions.software}`.slice(0, 200) };
    const timer = setTimeout(() => client.end(), AUTH_TIMEOUT_MS);
    client.on('error', (e) => d.log.debug(`sftp: connection from ${ip}: ${e.message}`));
    client.on('close', () => clearTimeout(timer));

    const refuse = (ctx: AuthContext) => {
      if (++tries >= MAX_AUTH_TRIES) {
        ctx.reject([]);
        client.end();
      } else ctx.reject(methods);
    };

    client.on('authentication', (ctx) => {
      if (ctx.method === 'password') {
        d.core.auth.signIn(ctx.username, ctx.password, req, 'sftp').then(
          (a) => {
            actor = a;
            ctx.accept();
          },
          (e) => {
            d.log.debug(`sftp: sign-in refused for ${JSON.stringify(ctx.username)} from ${ip}: ${e?.code ?? e}`);
            refuse(ctx);
          },
        );
        return;
      }
      if (ctx.method === 'publickey' && d.publicKey) {
        // Without a signature the client only asks whether the key would do (RFC 4252 section 7).
        const lookup = d.publicKey;
        const signed = !!ctx.signature;
        if (signed) {
          const key = ssh2.utils.parseKey(ctx.key.data);
          if (key instanceof Error || Array.isArray(key) || key.verify(ctx.blob!, ctx.signature!, ctx.hashAlgo) !== true) return refuse(ctx);
        }
        lookup(ctx.username, ctx.key.data, req, signed).then(
          (a) => {
            if (!a) return refuse(ctx);
            if (signed) actor = a;
            ctx.accept();
          },
          (e) => {
            d.log.debug(`sftp: key sign-in failed for ${JSON.stringify(ctx.username)} from ${ip}: ${e?.code ?? e}`);
            refuse(ctx);
          },
        );
        return;
      }
      // `none` (a client asking which methods exist) does not count as a try.
      if (ctx.method === 'none') return ctx.reject(methods);
      refuse(ctx);
    });

    client.on('ready', () => {
      clearTimeout(timer);
      let tree = d.core.tree(actor!, 'sftp');
      let readAt = Date.now();
      // A long session sees a change to its account or key within FRESH_MS, like the web's next request would.
      const treeNow = async () => {
        if (Date.now() - readAt < FRESH_MS) return tree;
        try {
          tree = d.core.tree(await d.restore(tree.actor), 'sftp');
          readAt = Date.now();
          return tree;
        } catch (e) {
          // After this request's refusal has gone out.
          setImmediate(() => client.end());
          throw e;
        }
      };
      const closeSession = d.core.registry.open('sftp', tree.who, ip);
      client.on('close', closeSession);
      client.on('session', (accept) => {
        const session = accept();
        session.on('sftp', (acceptSftp) => serveSftp(acceptSftp(), treeNow, tree.who.split(/[@ ]/)[0], stats));
        for (const refused of ['shell', 'exec', 'subsystem', 'pty', 'x11', 'auth-agent', 'env', 'signal'] as const) {
          session.on(refused as 'shell', (_accept, reject) => reject?.());
        }
      });
      client.on('tcpip', (_accept, reject) => reject());
      client.on('openssh.streamlocal', (_accept, reject) => reject());
      client.on('request', (_accept, reject) => reject?.());
    });
  });
  server.maxConnections = MAX_CONNECTIONS;
  return { server, clients, stats };
}
