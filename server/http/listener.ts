/**
 * The HTTP listeners (the main one and the optional public-links one) with
 * their timeouts set on purpose rather than left at Node's defaults:
 * - headers: a request's headers must arrive within `headersTimeoutMs`
 *   (checked every second, so a slow-header socket is gone within the bound
 *   plus one second; Node's default check runs every 30 s on a 60 s bound);
 * - inactivity: while a request is open, a socket with no byte in either
 *   direction for `idleTimeoutMs` is closed. A long upload or download that
 *   keeps moving is never cut: there is no total request time limit. The
 *   server's own thinking time is not the client's stall: between a request
 *   received whole and the first byte of its answer the socket stays open;
 * - keep-alive: an idle connection between requests closes after `keepAliveTimeoutMs`;
 * - the public listener caps open connections per client address.
 * See docs/architecture.md, "Serving under load".
 */
import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ListenerLimits {
  headersTimeoutMs: number;
  /** 0: no inactivity limit. */
  idleTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export interface Listener {
  server: Server;
  /** Binds; resolves with the port. */
  listen(port: number, host: string): Promise<number>;
  /** Connections refused by the per-address cap so far. */
  refused(): number;
}

/** The open sockets of every listener made here, for the last step of a shutdown. */
export class Listeners {
  private sockets = new Set<Socket>();
  private servers: Server[] = [];

  constructor(private limits: ListenerLimits) {}

  /**
   * A listener for `handler`. `maxConnsPerIp` > 0 closes a new connection at
   * once when its address already holds that many (the public listener).
   */
  create(handler: RequestListener, maxConnsPerIp = 0): Listener {
    const l = this.limits;
    const server = createServer(
      {
        headersTimeout: l.headersTimeoutMs,
        requestTimeout: 0,
        keepAliveTimeout: l.keepAliveTimeoutMs,
        connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(l.headersTimeoutMs / 4))),
      },
      handler,
    );
    server.timeout = l.idleTimeoutMs;
    // A listener on 'timeout' replaces Node's destroy: close only a socket waiting on its client.
    const answering = new WeakMap<Socket, ServerResponse>();
    server.on('request', (req, res) => answering.set(req.socket, res));
    server.on('timeout', (s: Socket) => {
      const res = answering.get(s);
      if (res && res.req.complete && !res.headersSent && !res.writableEnded) return;
      s.destroy();
    });
    const perAddress = new Map<string, number>();
    let refused = 0;
    server.on('connection', (s: Socket) => {
      if (maxConnsPerIp > 0) {
        const addr = s.remoteAddress ?? '';
        const n = perAddress.get(addr) ?? 0;
        if (n >= maxConnsPerIp) {
          refused++;
          s.destroy();
          return;
        }
        perAddress.set(addr, n + 1);
        s.once('close', () => {
          const left = (perAddress.get(addr) ?? 1) - 1;
          if (left > 0) perAddress.set(addr, left);
          else perAddress.delete(addr);
        });
      }
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    this.servers.push(server);
    return {
      server,
      refused: () => refused,
      listen: (port, host) =>
        new Promise((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, host, () => {
            server.off('error', reject);
            resolve((server.address() as { port: number }).port);
          });
        }),
    };
  }

  /** Stops accepting, lets in-flight requests finish up to `graceMs`, then closes what is left. */
  async close(graceMs: number): Promise<void> {
    const stopped = Promise.all(this.servers.map((srv) => new Promise<void>((r) => srv.close(() => r()))));
    for (const srv of this.servers) srv.closeIdleConnections();
    const bound = new Promise<void>((r) => setTimeout(r, graceMs).unref());
    await Promise.race([stopped, bound]);
    for (const s of this.sockets) s.destroy();
  }
}
