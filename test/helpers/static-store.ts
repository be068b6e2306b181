/**
 * A store folder served on loopback the way any static web server serves it:
 * files by plain name, strong ETags and `If-None-Match` (what the app store's
 * conditional refresh relies on). `seen` records each request's path and status.
 * And a folder listed the way web servers list one (the example storage driver's backend).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';

/** Listens on 127.0.0.1 port 0; answers the base URL (with its trailing slash). */
export async function listenLoopback(servers: Server[], handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const srv = createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  servers.push(srv);
  return `http://127.0.0.1:${(srv.address() as { port: number }).port}/`;
}

/** While `until` is set, a file whose path matches `path` is sent half, and the rest once `until` settles. */
export interface HeldFiles {
  path: RegExp;
  until?: Promise<void>;
}

export function serveStoreFolder(servers: Server[], dir: string, seen: Array<{ path: string; status: number }> = [], held?: HeldFiles): Promise<string> {
  return listenLoopback(servers, (req, res) => {
    const path = decodeURIComponent(new URL(req.url!, 'http://x').pathname).slice(1);
    let bytes: Buffer;
    try {
      // Files and plain folders (a store's `licenses/`), nothing hidden, no way up.
      if (path.split('/').some((seg) => seg === '' || seg.startsWith('.'))) throw new Error('no');
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
    if (status === 200 && held?.until && held.path.test(path)) {
      res.setHeader('content-length', bytes.length);
      res.write(bytes.subarray(0, bytes.length >> 1));
      return void held.until.then(() => res.end(bytes.subarray(bytes.length >> 1)));
    }
    res.end(status === 304 ? undefined : bytes);
  });
}

/** Closes every server `listenLoopback` opened, with their open connections. */
export function closeAll(servers: Server[]): void {
  for (const srv of servers) srv.closeAllConnections(), srv.close();
}

/** A web server listing `root`: `/json/<path>/` as nginx's `autoindex_format json`, `/html/<path>/` as an HTML page; files with Range. */
export function webFolder(root: string) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url!, 'http://x');
    const [, style, ...rest] = decodeURIComponent(url.pathname).split('/');
    const rel = rest.join('/');
    if (!['json', 'html'].includes(style) || rel.split('/').includes('..')) return void res.writeHead(404).end();
    const path = join(root, rel);
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st || st.isDirectory() !== (rel === '' || rel.endsWith('/'))) return void res.writeHead(404).end();
    if (st.isDirectory()) {
      const rows = readdirSync(path).map((name) => {
        const s = statSync(join(path, name));
        return { name, type: s.isDirectory() ? 'directory' : 'file', mtime: s.mtime.toUTCString(), ...(s.isFile() && { size: s.size }) };
      });
      if (style === 'json') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(rows));
      const links = rows.map((r) => `<a href="${encodeURIComponent(r.name)}${r.type === 'directory' ? '/' : ''}">${r.name}</a>`);
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><a href="../">../</a>\n${links.join('\n')}</body></html>`);
    }
    const bytes = readFileSync(path);
    const head = { 'last-modified': st.mtime.toUTCString(), 'accept-ranges': 'bytes' };
    const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (!m) return void res.writeHead(200, { ...head, 'content-length': bytes.length }).end(req.method === 'HEAD' ? undefined : bytes);
    const start = Number(m[1]);
    const end = Math.min(m[2] ? Number(m[2]) : bytes.length - 1, bytes.length - 1);
    res.writeHead(206, { ...head, 'content-range': `bytes ${start}-${end}/${bytes.length}`, 'content-length': end - start + 1 });
    res.end(bytes.subarray(start, end + 1));
  };
}
