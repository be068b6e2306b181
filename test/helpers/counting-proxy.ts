/**
 * A tiny HTTP proxy that counts the S3 requests passing through it by class
 * (LIST = GET with `list-type` or on the bucket itself, HEAD, GET, everything
 * else PUT): the backend's own view of how many requests a client made.
 * Headers go through untouched, so SigV4 signatures still verify. `hold`
 * keeps the requests it matches waiting (a backend call frozen mid-way) until
 * `release()`; one whose client went away meanwhile is dropped.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  url: string;
  counts: { list: number; head: number; get: number; put: number };
  /** Requests waiting in `hold` now. */
  held(): number;
  /** Sends the held requests on (those whose client is still there). */
  release(): void;
  close(): Promise<void>;
}

function classify(req: IncomingMessage): keyof CountingProxy['counts'] {
  const u = new URL(req.url ?? '/', 'http://x');
  if (req.method === 'HEAD') return 'head';
  if (req.method === 'GET') return u.searchParams.has('list-type') || u.pathname.split('/').filter(Boolean).length <= 1 ? 'list' : 'get';
  return 'put';
}

export async function startCountingProxy(target: string, o: { hold?: (req: IncomingMessage) => boolean } = {}): Promise<CountingProxy> {
  const t = new URL(target);
  const counts = { list: 0, head: 0, get: 0, put: 0 };
  let waiting: Array<() => void> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    counts[classify(req)]++;
    if (o.hold?.(req)) waiting.push(() => (res.destroyed ? undefined : forward(req, res)));
    else forward(req, res);
  });
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const up = request({ host: t.hostname, port: t.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      pipeline(r, res, () => {});
    });
    up.on('error', () => res.destroy());
    pipeline(req, up, () => {});
  };
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    held: () => waiting.length,
    release: () => {
      const go = waiting;
      waiting = [];
      for (const f of go) f();
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
