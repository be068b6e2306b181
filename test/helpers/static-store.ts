/**
 * A store folder served on loopback the way any static web server serves it:
 * files by plain name, strong ETags and `If-None-Match` (what the app store's
 * conditional refresh relies on). `seen` records each request's path and status.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';

/** Listens on 127.0.0.1 port 0; answers the base URL (with its trailing slash). */
export async function listenLoopback(servers: Server[], handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const srv = createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  servers.push(srv);
  return `http://127.0.0.1:${(srv.address() as { port: number }).port}/`;
}

export function serveStoreFolder(servers: Server[], dir: string, seen: Array<{ path: string; status: number }> = []): Promise<string> {
  return listenLoopback(servers, (req, res) => {
    const path = decodeURIComponent(new URL(req.url!, 'http://x').pathname).slice(1);
    let bytes: Buffer;
    try {
      if (path.includes('/') || path.startsWith('.')) throw new Error('no');
      bytes = readFileSync(join(dir, path));
    } catch {
      seen.push({ path, status: 404 });
      res.statusCode = 404;
      return void res.end();
    }
    const etag = `"${createHash('sha1').update(bytes).digest('hex')}"`;
    res.setHeader('etag', etag);
    const status = req.headers['if-none-match'] === etag ? 304 : 200;
    seen.push({ path, status });
    res.statusCode = status;
    res.end(status === 304 ? undefined : bytes);
  });
}

/** Closes every server `listenLoopback` opened, with their open connections. */
export function closeAll(servers: Server[]): void {
  for (const srv of servers) srv.closeAllConnections(), srv.close();
}
