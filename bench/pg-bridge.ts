/**
 * How should the synchronous server talk to PostgreSQL? Measures, in one run,
 * the cost of one statement on a 100,000-row `nodes`-shaped table:
 *   - sqlite:     better-sqlite3, prepared (today's runtime)
 *   - pg-await:   node-postgres, one connection, awaited one after another
 *   - pg-x8:      node-postgres, a pool of 8, 8 statements in flight (throughput)
 *   - bridge:     server/db/pg/bridge.ts, the synchronous bridge: a worker
 *                 thread owns the connection, the main thread blocks on
 *                 Atomics.wait until the worker's answer is on a MessagePort
 * Queries: `SELECT 1` (the fixed cost of a round trip), a point lookup by
 * (storage_id, path), a 1,000-row listing page, a one-row UPDATE. The throwaway cluster runs with fsync off: writes are
 * flattered on PostgreSQL. Noisy machine: read the load average printed.
 *
 *   npm run bench -- pg-bridge        (BENCH_ROUNDS=5)
 */
import { loadavg } from 'node:os';
import Database from 'better-sqlite3';
import pg from 'pg';
import { median, table } from './lib';
import { PgBridge, toPositional } from '../server/db/pg/bridge';
import { startPostgres } from '../test/helpers/postgres';
import { tempDir } from '../test/helpers/tools';

const ROWS = 100_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DIRS = 100; // 1,000 entries per folder
const N = { select1: 2000, point: 2000, page: 100, update: 1000 };

const DDL = `CREATE TABLE nodes (id INTEGER PRIMARY KEY, storage_id INTEGER NOT NULL, dir TEXT NOT NULL, name TEXT NOT NULL, path TEXT NOT NULL,
  type TEXT NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL, etag TEXT, mime TEXT, sort_key TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE UNIQUE INDEX nodes_path ON nodes(storage_id, path);
CREATE INDEX nodes_listing ON nodes(storage_id, dir, type, sort_key)`;
const Q = {
  select1: 'SELECT 1 AS one',
  point: 'SELECT * FROM nodes WHERE storage_id = ? AND path = ?',
  page: 'SELECT id, name, type, size, mtime, etag, mime FROM nodes WHERE storage_id = ? AND dir = ? ORDER BY type, sort_key LIMIT 1000',
  update: 'UPDATE nodes SET size = size + 1, updated_at = ? WHERE id = ?',
};
const row = (i: number) => {
  const dir = `d${i % DIRS}`;
  const name = `file-${String(i).padStart(6, '0')}.txt`;
  return [i + 1, 1, dir, name, `${dir}/${name}`, 'file', i * 10, 1_700_000_000_000 + i, `e${i}`, 'text/plain', name, '2026-11-27T00:00:00.000Z'];
};
const args = (q: keyof typeof Q, i: number): unknown[] =>
  q === 'select1'
    ? []
    : q === 'point'
      ? [1, `d${i % DIRS}/file-${String((i * 7919) % ROWS).padStart(6, '0')}.txt`.replace(/^d\d+/, `d${((i * 7919) % ROWS) % DIRS}`)]
      : q === 'page'
        ? [1, `d${i % DIRS}`]
        : [new Date().toISOString(), 1 + ((i * 7919) % ROWS)];

async function main() {
  const cluster = await startPostgres();
  const work = tempDir('filedock-bench-bridge-');
  try {
    const url = await cluster.createDatabase('bench');
    // SQLite as the server opens it.
    const lite = new Database(`${work.dir}/bench.sqlite`);
    lite.pragma('journal_mode = WAL');
    lite.pragma('synchronous = NORMAL');
    lite.exec(DDL);
    const ins = lite.prepare('INSERT INTO nodes VALUES (?,?,?,?,?,?,?,?,?,?,?,?)');
    lite.transaction(() => {
      for (let i = 0; i < ROWS; i++) ins.run(...row(i));
    })();
    lite.exec('ANALYZE');
    const pool = new pg.Pool({ connectionString: url, max: 8 });
    await pool.query(DDL.replace('id INTEGER PRIMARY KEY', 'id bigint PRIMARY KEY').replace(/INTEGER/g, 'bigint'));
    for (let i = 0; i < ROWS; i += 5000) {
      const rows = Array.from({ length: Math.min(5000, ROWS - i) }, (_, j) => row(i + j));
      await pool.query(`INSERT INTO nodes SELECT * FROM json_populate_recordset(null::nodes, $1)`, [
        JSON.stringify(
          rows.map((r) => ({
            id: r[0],
            storage_id: r[1],
            dir: r[2],
            name: r[3],
            path: r[4],
            type: r[5],
            size: r[6],
            mtime: r[7],
            etag: r[8],
            mime: r[9],
            sort_key: r[10],
            updated_at: r[11],
          })),
        ),
      ]);
    }
    await pool.query('ANALYZE nodes');
    const one = await pool.connect();
    const bridge = await PgBridge.open({ url });
    const liteQ = Object.fromEntries(Object.entries(Q).map(([k, sql]) => [k, lite.prepare(sql)])) as Record<keyof typeof Q, Database.Statement>;
    const pgQ = Object.fromEntries(Object.entries(Q).map(([k, sql]) => [k, toPositional(sql)])) as Record<keyof typeof Q, string>;

    type Mode = 'sqlite' | 'pg-await' | 'pg-x8' | 'bridge';
    const run: Record<Mode, (q: keyof typeof Q, n: number) => Promise<void>> = {
      sqlite: async (q, n) => {
        const st = liteQ[q];
        for (let i = 0; i < n; i++) q === 'update' ? st.run(...args(q, i)) : st.all(...args(q, i));
      },
      'pg-await': async (q, n) => {
        for (let i = 0; i < n; i++) await one.query({ name: `a-${q}`, text: pgQ[q], values: args(q, i) });
      },
      'pg-x8': async (q, n) => {
        let next = 0;
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (next < n) {
              const i = next++;
              await pool.query({ name: `p-${q}`, text: pgQ[q], values: args(q, i) });
            }
          }),
        );
      },
      bridge: async (q, n) => {
        for (let i = 0; i < n; i++) bridge.query(Q[q], args(q, i));
      },
    };
    // Sanity: every way answers the same.
    const probe = args('point', 3);
    const expect = (liteQ.point.all(...probe) as Array<{ id: number }>)[0].id;
    if (bridge.query<{ id: number }>(Q.point, probe).rows[0].id !== expect) throw new Error('bridge answered differently');
    if (Number((await one.query(pgQ.point, probe)).rows[0].id) !== expect) throw new Error('pg answered differently');

    const modes: Mode[] = ['sqlite', 'pg-await', 'pg-x8', 'bridge'];
    const us: Record<string, number[]> = {};
    for (let r = 0; r < ROUNDS; r++) {
      for (const q of Object.keys(Q) as Array<keyof typeof Q>) {
        for (const m of modes) {
          await run[m](q, Math.ceil(N[q] / 10)); // warm
          const t0 = performance.now();
          await run[m](q, N[q]);
          (us[`${q}|${m}`] ??= []).push(((performance.now() - t0) * 1000) / N[q]);
        }
      }
    }
    const rows = Object.entries(us).map(([k, xs]) => {
      const [q, m] = k.split('|');
      return { query: q, mode: m, 'µs per statement (median of rounds)': median(xs).toFixed(1), 'statements/s': Math.round(1e6 / median(xs)) };
    });
    table(
      `one statement, ${ROWS} rows, ${ROUNDS} rounds; load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
      rows,
    );
    one.release();
    await pool.end();
    await bridge.close();
    lite.close();
  } finally {
    await cluster.destroy();
    work.cleanup();
  }
}

await main();
