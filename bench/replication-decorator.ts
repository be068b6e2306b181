/**
 * The synchronous cost replication adds to every primary write: what the
 * driver decorator awaits once the primary's write has returned
 * (`engine.changed`: the link lookup, the rule match and, for a linked
 * storage, the job row queued), timed per call in µs on a real SQLite file
 * (the service's pragmas and migrations), a linked storage and an unlinked one
 * alternating; then the linked call's steps on their own, and the job row the
 * engine writes at the end of the tick (after the write has answered). The
 * queue is not started, so every change queues a row of its own (distinct
 * paths: the no-coalescing worst case) and nothing else runs meanwhile.
 *
 *   npm run bench -- replication-decorator     (BENCH_CALLS=5000, BENCH_RULES=20)
 */
import { join } from 'node:path';
import { DEFAULT_TENANT, openDatabase } from '../server/db';
import { EventBus } from '../server/events';
import { JobQueue } from '../server/jobs';
import { createReplication } from '../server/replication';
import { SettingsStore } from '../server/settings';
import { table } from './lib';
import { tempDir } from '../test/helpers/tools';

const CALLS = Number(process.env.BENCH_CALLS ?? 5000);
const RULES = Number(process.env.BENCH_RULES ?? 20);
const WARMUP = 500;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const us = (x: number) => `${x.toFixed(1)} µs`;

/** µs of each call of `fn(i)` for i in [from, to). */
async function timed(from: number, to: number, fn: (i: number) => unknown, into: number[]): Promise<void> {
  for (let i = from; i < to; i++) {
    const t = process.hrtime.bigint();
    await fn(i);
    into.push(Number(process.hrtime.bigint() - t) / 1000);
  }
}

export async function decoratorCost(): Promise<Array<Record<string, string>>> {
  const work = tempDir('filedock-bench-decorator-');
  const db = openDatabase(join(work.dir, 'service.sqlite'));
  try {
    const queue = new JobQueue(db);
    const unused = () => {
      throw new Error('not reached by a change');
    };
    const repl = createReplication({
      db,
      bus: new EventBus(db),
      queue,
      settings: new SettingsStore(db),
      log: () => undefined,
      backends: unused,
      unlinkStorages: unused,
      // Both storages are tenant 1's (the table's default); the server asks its storages' in-memory copy.
      storageTenant: (st) => (['s-on', 's-off', 1, 2].includes(st) ? DEFAULT_TENANT : undefined),
      summary: () => '',
      primary: unused,
      backoffMs: 5000,
      timeoutMs: 600_000,
      rpoWarnS: 3600,
      scratchDir: join(work.dir, 'scratch'),
    });
    const t = new Date().toISOString();
    db.sqlite
      .prepare("INSERT INTO replica_targets (id, uid, name, driver, mode, created_at, updated_at) VALUES (1, 't', 'nas', 'local', 'async', ?, ?)")
      .run(t, t);
    const storage = db.sqlite.prepare('INSERT INTO storages (uid, name, driver, replica_target_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');
    storage.run('s-on', 'on', 'local', 1, t, t);
    storage.run('s-off', 'off', 'local', null, t, t);
    // Rules no path below matches: every call tries them all (the slow case of the first-match walk).
    for (let i = 0; i < RULES; i++) await repl.policy.createRule(DEFAULT_TENANT, { path_pattern: `on/skipped${i}/**/*.tmp`, mode: 'skip', priority: i });

    const path = (i: number) => `photos/${i % 97}/img${i}.jpg`;
    const on: number[] = [];
    const off: number[] = [];
    await timed(0, WARMUP, (i) => repl.engine.changed('s-on', 'write', `warm/${i}`), []);
    await timed(0, WARMUP, (i) => repl.engine.changed('s-off', 'write', `warm/${i}`), []);
    for (let i = 0; i < CALLS; i++) {
      await timed(i, i + 1, (j) => repl.engine.changed('s-on', 'write', path(j)), on);
      await timed(i, i + 1, (j) => repl.engine.changed('s-off', 'write', path(j)), off);
    }
    await new Promise((r) => setImmediate(r));
    const link: number[] = [];
    const match: number[] = [];
    const rows: number[] = [];
    await timed(0, CALLS, () => repl.engine.linkedTarget('s-on'), link);
    const modeFor = await repl.policy.matcher(DEFAULT_TENANT);
    await timed(0, CALLS, (i) => modeFor('on', path(i)), match);
    for (let i = 0; i < CALLS; i++) {
      repl.engine.enqueue(DEFAULT_TENANT, { storage_id: 1, op: 'write', rel: `again/${path(i)}` });
      await timed(i, i + 1, () => repl.engine.flush(), rows);
    }
    const row = (what: string, xs: number[]) => ({ what, p50: us(pct(xs, 0.5)), p99: us(pct(xs, 0.99)), mean: us(xs.reduce((a, b) => a + b, 0) / xs.length) });
    return [
      row('engine.changed, linked storage (async target): on the write path', on),
      row('engine.changed, unlinked storage', off),
      row('  linked: link lookup (storage + target rows)', link),
      row(`  linked: rule match (${RULES} rules, none matching)`, match),
      row("after the write answered: a tick's job row (dedup check, insert, commit)", rows),
    ];
  } finally {
    db.sqlite.close();
    work.cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`)
  table(`Replication's synchronous cost per primary write, ${CALLS} calls each, alternating`, await decoratorCost());
