/**
 * How should the synchronous server talk to PostgreSQL? Measures, in one run,
 * the cost of one statement on a 100,000-row `nodes`-shaped table:
 *   - sqlite:     better-sqlite3, prepared (today's runtime)
 *   - pg-await:   node-postgres, one connection, awaited one after another
 *   - pg-x8:      node-postgres, a pool of 8, 8 statements in flight (throughput)
 *   - bridge:     a prototype synchronous bridge: a worker thread owns the
 *                 connection, the main thread posts the statement and blocks
 *                 on Atomics.wait until the worker's answer is on a MessagePort
 *   - bridge-hop: the bridge with no database behind it (the thread hop alone)
 * Queries: a point lookup by (storage_id, path), a 1,000-row listing page, a
 * one-row UPDATE. The throwaway cluster runs with fsync off: writes are
 * flattered on PostgreSQL. Noisy machine: read the load average printed.
 *
 *   npm run bench -- pg-bridge        (BENCH_ROUNDS=5)
 */
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import Database from 'better-sqlite3';
import pg from 'pg';
import { median, table } from './lib';
import { startPostgres } from '../test/helpers/postgres';
import { tempDir } from '../test/helpers/tools';

const ROWS = 100_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DIRS = 100; // 1,000 entries per folder
const N = { point: 2000, page: 100, update: 1000 };

const DDL = `CREATE TABLE nodes (id INTEGER PRIMARY KEY, storage_id INTEGER NOT NULL, dir TEXT NOT NULL, name TEXT NOT NULL, path TEXT NOT NULL,
  type TEXT NOT NULL, size INTEGER NOT NULL, mtime INTEGER NOT NULL, etag TEXT, mime TEXT, sort_key TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE UNIQUE INDEX nodes_path ON nodes(storage_id, path);
CREATE INDEX nodes_listing ON nodes(storage_id, dir, type, sort_key)`;
const Q = {
  point: 'SELECT * FROM nodes WHERE storage_id = $1 AND path = $2',
  page: 'SELECT id, name, type, size, mtime, etag, mime FROM nodes WHERE storage_id = $1 AND dir = $2 ORDER BY type, sort_key LIMIT 1000',
  update: 'UPDATE nodes SET size = size + 1, updated_at = $1 WHERE id = $2',
};
const row = (i: number) => {
  const dir = `d${i % DIRS}`;
  const name = `file-${String(i).padStart(6, '0')}.txt`;
  return [i + 1, 1, dir, name, `${dir}/${name}`, 'file', i * 10, 1_700_000_000_000 + i, `e${i}`, 'text/plain', name, '2026-11-27T00:00:00.000Z'];
};
const args = (q: keyof typeof Q, i: number): unknown[] =>
  q === 'point' ? [1, `d${i % DIRS}/file-${String((i * 7919) % ROWS).padStart(6, '0')}.txt`.replace(/^d\d+/, `d${((i * 7919) % ROWS) % DIRS}`)]
  : q === 'page' ? [1, `d${i % DIRS}`]
  : [new Date().toISOString(), 1 + ((i * 7919) % ROWS)];

/** The prototype bridge: one statement at a time, the main thread blocked until the answer or the timeout. */
class SyncBridge {
  private worker: Worker;
  private flag = new Int32Array(new SharedArrayBuffer(4));
  private port: MessagePort;
  private seq = 0;

  constructor(url: string | null) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const pgPath = createRequire(import.meta.url).resolve('pg');
    this.worker = new Worker(WORKER_JS, { eval: true, workerData: { url, pgPath, flag: this.flag, port: port2 }, transferList: [port2] });
  }

  ready(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.worker.once('message', (m) => (m === 'ready' ? resolve() : reject(new Error(String(m)))));
      this.worker.once('error', reject);
    });
  }

  query(sql: string, params: unknown[], timeoutMs = 2000): unknown[] {
    const seq = ++this.seq;
    Atomics.store(this.flag, 0, 0);
    this.worker.postMessage({ seq, sql, params });
    for (;;) {
      if (Atomics.wait(this.flag, 0, 0, timeoutMs) === 'timed-out') throw new Error('database did not answer in time');
      const m = receiveMessageOnPort(this.port)?.message as { seq: number; rows?: unknown[]; error?: string } | undefined;
      if (!m || m.seq !== seq) {
        Atomics.store(this.flag, 0, 0); // a late answer to a timed-out statement: keep waiting for ours
        continue;
      }
      if (m.error) throw new Error(m.error);
      return m.rows!;
    }
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

const WORKER_JS = `
const { workerData, parentPort } = require('node:worker_threads');
const { url, pgPath, flag, port } = workerData;
const answer = (m) => { port.postMessage(m); Atomics.store(flag, 0, 1); Atomics.notify(flag, 0); };
(async () => {
  let c = null;
  if (url) { const pg = require(pgPath); c = new pg.Client(url); await c.connect(); }
  parentPort.on('message', async ({ seq, sql, params }) => {
    if (!c) return answer({ seq, rows: [] });
    try { answer({ seq, rows: (await c.query({ name: 'q' + sql.length + sql.slice(0, 12), text: sql, values: params })).rows }); }
    catch (e) { answer({ seq, error: e.message }); }
  });
  parentPort.postMessage('ready');
})().catch((e) => parentPort.postMessage(String(e)));
`;

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
        JSON.stringify(rows.map((r) => ({ id: r[0], storage_id: r[1], dir: r[2], name: r[3], path: r[4], type: r[5], size: r[6], mtime: r[7], etag: r[8], mime: r[9], sort_key: r[10], updated_at: r[11] }))),
      ]);
    }
    await pool.query('ANALYZE nodes');
    const one = await pool.connect();
    const bridge = new SyncBridge(url);
    const hop = new SyncBridge(null);
    await Promise.all([bridge.ready(), hop.ready()]);
    const liteQ = Object.fromEntries(Object.entries(Q).map(([k, sql]) => [k, lite.prepare(sql.replace(/\$\d/g, '?'))])) as Record<keyof typeof Q, Database.Statement>;

    type Mode = 'sqlite' | 'pg-await' | 'pg-x8' | 'bridge' | 'bridge-hop';
    const run: Record<Mode, (q: keyof typeof Q, n: number) => Promise<void>> = {
      sqlite: async (q, n) => {
        const st = liteQ[q];
        for (let i = 0; i < n; i++) (q === 'update' ? st.run(...args(q, i)) : st.all(...args(q, i)));
      },
      'pg-await': async (q, n) => {
        for (let i = 0; i < n; i++) await one.query({ name: `a-${q}`, text: Q[q], values: args(q, i) });
      },
      'pg-x8': async (q, n) => {
        let next = 0;
        await Promise.all(Array.from({ length: 8 }, async () => {
          while (next < n) {
            const i = next++;
            await pool.query({ name: `p-${q}`, text: Q[q], values: args(q, i) });
          }
        }));
      },
      bridge: async (q, n) => {
        for (let i = 0; i < n; i++) bridge.query(Q[q], args(q, i));
      },
      'bridge-hop': async (q, n) => {
        for (let i = 0; i < n; i++) hop.query(Q[q], args(q, i));
      },
    };
    // Sanity: every way answers the same.
    const probe = args('point', 3);
    const expect = (liteQ.point.all(...probe) as Array<{ id: number }>)[0].id;
    if (Number((bridge.query(Q.point, probe) as Array<{ id: string }>)[0].id) !== expect) throw new Error('bridge answered differently');
    if (Number((await one.query(Q.point, probe)).rows[0].id) !== expect) throw new Error('pg answered differently');

    const modes: Mode[] = ['sqlite', 'pg-await', 'pg-x8', 'bridge', 'bridge-hop'];
    const us: Record<string, number[]> = {};
    for (let r = 0; r < ROUNDS; r++) {
      for (const q of Object.keys(Q) as Array<keyof typeof Q>) {
        for (const m of modes) {
          if (m === 'bridge-hop' && q !== 'point') continue;
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
    table(`one statement, ${ROWS} rows, ${ROUNDS} rounds; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`, rows);
    one.release();
    await pool.end();
    await bridge.close();
    await hop.close();
    lite.close();
  } finally {
    await cluster.destroy();
    work.cleanup();
  }
}

await main();
