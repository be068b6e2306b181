/**
 * Listing throughput: 1,000-row pages of a 100,000-entry folder with 8
 * concurrent clients (wrk, one thread), for the first page and for a deep page
 * reached with the keyset cursor, against a naive Node listing (SELECT *,
 * objects, JSON.stringify) over the same database in the same run. Targets:
 * p99 <= 10 ms and at least 400 listings/s.
 *
 *   node --import tsx bench/listing.ts        (BENCH_ENTRIES=100000, BENCH_SECONDS=10)
 */
import { createServer } from 'node:http';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ensureBuilt, sleep, startService, table, wrk, type Service } from './lib';
import { adminEnv, mount } from './download';
import { tempDir } from '../test/helpers/tools';

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

/** The anchor: what a straightforward listing costs (rows as objects, then JSON.stringify); honours `?offset=`. */
export function naiveServer(dbPath: string): Promise<{ url: string; close(): void }> {
  const db = new Database(dbPath, { readonly: true });
  const page = db.prepare('SELECT * FROM nodes WHERE storage_id = 1 AND dir = ? AND deleted_at IS NULL ORDER BY type, sort_key, id LIMIT 1000 OFFSET ?');
  const count = db.prepare('SELECT count(*) AS n FROM nodes WHERE storage_id = 1 AND dir = ? AND deleted_at IS NULL');
  const server = createServer((req, res) => {
    const offset = Number(new URL(req.url!, 'http://x').searchParams.get('offset') ?? 0);
    const rows = page.all('big', offset) as Array<Record<string, any>>;
    const entries = rows.map((r) => ({
      id: r.id,
      name: r.name,
      type: r.type,
      size: r.size,
      modified: new Date(r.mtime).toISOString(),
      mime: r.mime,
      etag: r.etag ?? `"${r.size.toString(16)}-${r.mtime.toString(16)}"`,
      is_image: false,
      is_video: false,
      thumb_url: '',
      locked: false,
      lock: null,
      app_state: [],
      perm: 'admin',
    }));
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: '/Bench/big', entries, total: (count.get('big') as { n: number }).n }));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, close: () => (server.close(), db.close()) }),
    ),
  );
}

/**
 * A service with storage `Bench` holding folder `big` (or each of `folders`)
 * of `entries` empty files, synced into the catalogue; `auth` carries the
 * admin's bearer token.
 */
export async function syncedFolder(
  entries: number,
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
  folders = ['big'],
): Promise<{ svc: Service; auth: Record<string, string>; filesDir: string; cleanup(): Promise<void> }> {
  const files = tempDir('filedock-bench-ls-');
  for (const name of folders) {
    const folder = join(files.dir, name);
    mkdirSync(folder);
    for (let i = 0; i < entries; i++) closeSync(openSync(join(folder, `file-${i}.txt`), 'w'));
  }
  const svc = await startService({ ...adminEnv, ...env }, nodeArgs);
  const token = await mount(svc, 'Bench', files.dir);
  const auth = { authorization: `Bearer ${token}` };
  const sync = await (await fetch(`${svc.url}/api/admin/storages/1/sync`, { method: 'POST', headers: auth })).json();
  // Up to 20 minutes: a first sync on PostgreSQL takes several times SQLite's.
  for (const end = Date.now() + 1_200_000; ; ) {
    const run = await (await fetch(`${svc.url}/api/admin/sync/runs/${sync.run_id}`, { headers: auth })).json();
    if (run.status === 'completed') break;
    if (run.status === 'failed' || Date.now() > end) throw new Error(`sync of the bench folder: ${run.status}`);
    await sleep(100);
  }
  return { svc, auth, filesDir: files.dir, cleanup: async () => (await svc.stop(), files.cleanup()) };
}

async function main(): Promise<void> {
  ensureBuilt();
  const { svc, auth, cleanup } = await syncedFolder(ENTRIES);
  let naive: { url: string; close(): void } | null = null;
  try {
    const first = `${svc.url}/api/files/manager?path=/Bench/big&limit=1000`;
    let cursor = '';
    for (let i = 0; i < 50; i++) cursor = (await (await fetch(`${first}${cursor ? `&cursor=${cursor}` : ''}`, { headers: auth })).json()).next_cursor;
    const deep = `${first}&cursor=${cursor}`;
    const check = await (await fetch(deep, { headers: auth })).json();
    if (check.entries.length !== 1000 || check.total !== ENTRIES) throw new Error(`unexpected page: ${check.entries.length} of ${check.total}`);
    naive = await naiveServer(join(svc.dataDir, 'filedock.sqlite'));
    const rows = [];
    for (const [name, url, headers] of [
      ['naive Node + SQLite + JSON (anchor)', naive.url, {}],
      ['service, first page', first, auth],
      ['service, page 51 by cursor', deep, auth],
      ['service, page 51 by offset', `${first}&offset=50000`, auth],
    ] as const) {
      const r = await wrk(url, { connections: 8, seconds: SECONDS, headers });
      rows.push({ listing: name, 'req/s': r.rps, 'p50 ms': r.p50, 'p99 ms': r.p99, errors: r.errors + r.non2xx });
    }
    table(`1,000-row pages of a ${ENTRIES}-entry folder, 8 connections, ${SECONDS} s each`, rows);
    for (const r of rows.slice(1, 3))
      console.log(
        `${r.listing}: ${r['req/s'] >= 400 && r['p99 ms'] <= 10 ? 'PASS' : 'FAIL'} (target >= 400 req/s, p99 <= 10 ms); ${(r['req/s'] / rows[0]['req/s']).toFixed(1)}x the anchor`,
      );
  } finally {
    naive?.close();
    await cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
