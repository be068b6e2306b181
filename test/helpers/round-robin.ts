/** A round-robin reverse proxy in front of several service instances (the load balancer of the scaled-out shape). */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';

/**
 * A round-robin reverse proxy: request n goes to upstream n mod 2, bodies
 * streamed both ways. `served` says which upstream took each request.
 */
export async function roundRobin(upstreams: () => string[]) {
  let n = 0;
  const served: Array<{ path: string; upstream: number }> = [];
  const server = http.createServer((req, res) => {
    const list = upstreams();
    const i = n++ % list.length;
    served.push({ path: req.url!, upstream: i });
    const target = new URL(req.url!, list[i]);
    // A fresh upstream connection per request: reusing an idle one races the server's keep-alive close.
    const up = http.request(target, { method: req.method, headers: { ...req.headers, host: target.host }, agent: false }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      pipeline(answer, res).catch(() => res.destroy());
    });
    // Once an answer has begun it is passed on whole (an early refusal of a body still being sent included).
    pipeline(req, up).catch(() => {
      if (!res.headersSent) res.writeHead(502).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
