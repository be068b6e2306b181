/**
 * Per-request HTTP metrics: count by method, route and status code, latency
 * by method and route, bytes in and out by route, and what the public link
 * door sent. Labels stay few: the route is the router's template
 * (`/api/files/raw`, `/s/:token`), never the requested path, so file names
 * and link tokens never reach a label.
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Ctx } from '../context';

/** Seconds: from a cached listing (~1 ms) to a large download or a slow storage (a minute). */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

interface Layer {
  path: string | RegExp;
  methods: string[];
}

/** The template of the route that answered, or a fixed name for what no router matched. */
export function routeLabel(ctx: Ctx): string {
  const matched = (ctx as unknown as { matched?: Layer[] }).matched;
  if (matched) {
    for (let i = matched.length - 1; i >= 0; i--) if (matched[i].methods.includes(ctx.method)) return String(matched[i].path);
  }
  const p = ctx.path;
  if (p === '/dav' || p.startsWith('/dav/')) return '/dav';
  return p === '/api' || p.startsWith('/api/') ? 'unmatched' : 'web_app';
}

type Bound = { count: { inc(): void }; seconds: { observe(v: number): void }; received: { inc(n: number): void }; sent: { inc(n: number): void } };

export class HttpRecorder {
  private requests;
  private seconds;
  private received;
  private sent;
  private publicSent;
  /** Children bound to their labels once: a request's five updates are then plain additions. */
  private bound = new Map<string, Bound>();
  /** A keep-alive socket's byte counters when its previous response ended: the next response's bytes are the difference. */
  private seen = new WeakMap<Socket, { read: number; written: number }>();

  constructor(registers: Registry[]) {
    this.requests = new Counter({
      name: 'filedock_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status code.',
      labelNames: ['method', 'route', 'code'],
      registers,
    });
    this.seconds = new Histogram({
      name: 'filedock_http_request_duration_seconds',
      help: "Time from a request's arrival to the end of its response, by method and route template.",
      labelNames: ['method', 'route'],
      buckets: BUCKETS,
      registers,
    });
    this.received = new Counter({
      name: 'filedock_http_received_bytes_total',
      help: 'Bytes received on HTTP connections (headers and bodies), by route template.',
      labelNames: ['route'],
      registers,
    });
    this.sent = new Counter({
      name: 'filedock_http_sent_bytes_total',
      help: 'Bytes sent on HTTP connections (headers and bodies), by route template.',
      labelNames: ['route'],
      registers,
    });
    this.publicSent = new Counter({ name: 'filedock_public_link_sent_bytes_total', help: 'Bytes sent to visitors of public links and drops.', registers });
  }

  /** Starts timing `ctx`; its figures are recorded when the response closes (finished, failed or abandoned). */
  start(ctx: Ctx): void {
    const t0 = performance.now();
    ctx.res.once('close', () => this.finish(ctx, t0));
  }

  private finish(ctx: Ctx, t0: number): void {
    const route = routeLabel(ctx);
    const code = String(ctx.res.statusCode);
    const key = `${ctx.method} ${route} ${code}`;
    let b = this.bound.get(key);
    if (!b) {
      b = {
        count: this.requests.labels(ctx.method, route, code),
        seconds: this.seconds.labels(ctx.method, route),
        received: this.received.labels(route),
        sent: this.sent.labels(route),
      };
      this.bound.set(key, b);
    }
    b.count.inc();
    b.seconds.observe((performance.now() - t0) / 1000);
    const socket = ctx.req.socket;
    const before = this.seen.get(socket) ?? { read: 0, written: 0 };
    const now = { read: socket.bytesRead, written: socket.bytesWritten };
    this.seen.set(socket, now);
    b.received.inc(Math.max(0, now.read - before.read));
    const out = Math.max(0, now.written - before.written);
    b.sent.inc(out);
    if (ctx.state.door === 'public' || ctx.state.door === 'drop') this.publicSent.inc(out);
  }
}
