/**
 * Sync engine against a generated tree (default 200,000 files in 2,000
 * folders; `--files N --dirs M`). Anchor in the same run: `find <root>
 * -printf '%s %T@ %p\n'`. Reports the first full sync and a no-change re-sync
 * as ratios to find, peak RSS of the service, and listing latency (p50/p99)
 * of a folder while the full sync runs. `BENCH_DATABASE=postgres`: the service on
 * a throwaway PostgreSQL cluster instead of SQLite.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiClient, ensureBuilt, fileTree, median, sleep, startService, table } from './lib';
import { startPostgres } from '../test/helpers/postgres';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const files = arg('files', 200_000);
const dirs = arg('dirs', 2_000);
const root = fileTree(files, dirs);

const findMs: number[] = [];
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  spawnSync('sh', ['-c', `find '${root}' -printf '%s %T@ %p\\n' > /dev/null`]);
  findMs.push(performance.now() - t);
}
const find = median(findMs);

ensureBuilt();
const cluster = process.env.BENCH_DATABASE === 'postgres' ? await startPostgres() : null;
const dbEnv: Record<string, string> = cluster ? { SERVICE_DATABASE_URL: await cluster.createDatabase('bench_sync') } : {};
const svc = await startService({ SERVICE_ADMIN_EMAIL: 'a@example.test', SERVICE_ADMIN_PASSWORD: 'bench-password', ...dbEnv });
const api = await apiClient(svc.url, 'a@example.test', 'bench-password');
const token = api.token;

// A small second storage whose folder is listed while the big sync runs.
const small = join(tmpdir(), 'filedock-bench-small');
mkdirSync(small, { recursive: true });
for (let i = 0; i < 1000; i++) if (!existsSync(join(small, `f${i}`))) writeFileSync(join(small, `f${i}`), 'x');
await api('POST', '/api/admin/storages', { name: 'Small', driver: 'local', config: { path: small } });
await sleep(1000);

let peakRss = 0;
const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, svc.rssMb())), 100);
const created = await api('POST', '/api/admin/storages', { name: 'Big', driver: 'local', config: { path: root } });
const id = created.body.id;
const runOf = async () => (await api('GET', `/api/admin/sync/runs?storage_id=${id}&limit=1`)).body.runs[0];
const lat: number[] = [];
let listingRoute = '/api/files/manager?path=/Small&limit=1000';
for (;;) {
  const t = performance.now();
  const r = await fetch(svc.url + listingRoute, { headers: { authorization: `Bearer ${token}` } });
  await r.arrayBuffer();
  if (r.status === 404) listingRoute = '/api/files/quota/storages';
  else lat.push(performance.now() - t);
  const run = await runOf();
  if (run && (run.status === 'completed' || run.status === 'failed')) break;
  await sleep(20);
}
const first = await runOf();
const firstMs = Date.parse(first.finished_at) - Date.parse(first.started_at);
const again = (await api('POST', `/api/admin/storages/${id}/sync`)).body.run_id;
const re = await api.waitRun(again, 3_600_000);
const reMs = Date.parse(re.finished_at) - Date.parse(re.started_at);
clearInterval(rssTimer);
await svc.stop();
await cluster?.destroy();
lat.sort((a, b) => a - b);
const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor((lat.length * p) / 100))]?.toFixed(1);
table(`sync of ${files} files in ${dirs} folders on ${cluster ? 'PostgreSQL' : 'SQLite'} (${readdirSync(root).length} top folders)`, [
  { what: 'anchor: find -printf', ms: find.toFixed(0), ratio: '1.00', note: '' },
  { what: 'first full sync', ms: firstMs, ratio: (firstMs / find).toFixed(2), note: `${first.added} added, status ${first.status} (target ≤ 5x)` },
  { what: 're-sync, nothing changed', ms: reMs, ratio: (reMs / find).toFixed(2), note: `${re.updated} updated, ${re.removed} removed (target ≤ 3x)` },
  {
    what: `listing during sync (${listingRoute.split('?')[0]})`,
    ms: `p50 ${pct(50)} / p99 ${pct(99)}`,
    ratio: '',
    note: `${lat.length} requests (target p99 < 50 ms)`,
  },
  { what: 'service peak RSS (MB)', ms: peakRss.toFixed(0), ratio: '', note: '' },
]);
void execFileSync;
