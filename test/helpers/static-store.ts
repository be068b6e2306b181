/**
 * A store folder (docs/app-store.md) served as a plain static site on
 * loopback: files by name, nothing below or above the folder, 404 otherwise.
 * What any web server hosting a store does, minus ETags (app-store.test.ts
 * serves its own with them).
 */
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export async function serveStoreFolder(dir: string): Promise<{ url: string; close: () => void }> {
  const srv = createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url!, 'http://x').pathname).slice(1);
    try {
      if (name.includes('/') || name.startsWith('.')) throw new Error('outside the store');
      res.end(readFileSync(join(dir, name)));
    } catch {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(srv.address() as { port: number }).port}/`,
    close: () => {
      srv.closeAllConnections();
      srv.close();
    },
  };
}
