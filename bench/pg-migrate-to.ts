/**
 * `service db migrate-to` on a large catalogue: a SQLite database made by
 * the real migrations holding one storage with BENCH_NODES files (default
 * 200,000, each with its search row) and 50,000 audit rows is copied into an
 * empty PostgreSQL database (the test harness's cluster, fsync off) with the
 * real copy, verification included. Noisy machine: read the load average.
 *
 *   npm run bench -- pg-migrate-to     (BENCH_NODES=200000)
 */
import { loadavg } from 'node:os';
import { statSync } from 'node:fs';
import { openDatabase, copySqliteToPostgres } from '../server/db';
import { startPostgres } from '../test/helpers/postgres';
import { tempDir } from '../test/helpers/tools';
import { table } from './lib';

const NODES = Number(process.env.BENCH_NODES ?? 200_000);
const AUDIT = 50_000;

async function main() {
  const work = tempDir('filedock-bench-migrate-');
  const cluster = await startPostgres();
  try {
    const file = `${work.dir}/filedock.sqlite`;
    const db = openDatabase(file);
    const now = new Date().toISOString();
    const s = db.sqlite;
    s.prepare(`INSERT INTO storages (id, uid, name, driver, config, created_at, updated_at) VALUES (1, 'u1', 'Files', 'local', '{}', ?, ?)`).run(now, now);
    const node = s.prepare(
      `INSERT INTO nodes (id, storage_id, dir, name, path, type, size, mtime, etag, mime, sort_key, updated_at) VALUES (?, 1, ?, ?, ?, 'file', ?, ?, ?, 'text/plain', ?, ?)`,
    );
    const fts = s.prepare('INSERT INTO search_fts (rowid, name) VALUES (?, ?)');
    const audit = s.prepare(
      `INSERT INTO audit (ts, user_id, user_email, action, resource, ip, meta) VALUES (?, 1, 'a@example.test', 'file.upload', ?, '127.0.0.1', '{}')`,
    );
    s.transaction(() => {
      for (let i = 1; i <= NODES; i++) {
        const dir = `d${i % 200}`;
        const name = `file-${i}.txt`;
        node.run(i, dir, name, `${dir}/${name}`, i * 3, 1_700_000_000_000 + i, `e${i}`, name, now);
        fts.run(i, name);
      }
      for (let i = 0; i < AUDIT; i++) audit.run(now, `/Files/f${i}`);
    })();
    await db.close();
    const url = await cluster.createDatabase('target');
    const t0 = performance.now();
    const tables = await copySqliteToPostgres(file, url);
    const s_ = (performance.now() - t0) / 1000;
    const rows = tables.reduce((n, t) => n + t.rows, 0);
    table(
      `migrate-to, ${NODES} files; load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
      [{ sqlite_mb: (statSync(file).size / 1e6).toFixed(0), tables: tables.length, rows, seconds: s_.toFixed(1), 'rows/s': Math.round(rows / s_) }],
    );
  } finally {
    await cluster.destroy();
    work.cleanup();
  }
}

await main();
