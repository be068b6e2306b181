/**
 * A write the gate takes back because its COMMIT went unanswered (the server process hung at that
 * moment) on a real cluster: the writer answers `database_busy` and its bytes go; when the hung process
 * wakes and its COMMIT lands, the gate removes the row it left, so nothing lists a file that is gone.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { commitInDoubt, openPostgresDatabase, type Db } from '../db';
import { openPool } from '../db/pg/pool';
import { EventBus } from '../events';
import { NodesRepo } from './nodes.repo';
import { WriteGate } from './write-gate';
import { tempDir } from '../../test/helpers/tools';
import { needPostgres, startPostgres, type PgCluster } from '../../test/helpers/postgres';

const skip = needPostgres();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the write gate on PostgreSQL', { skip: skip ?? false }, () => {
  let cluster: PgCluster;
  let base: Db;
  const tmp = tempDir('filedock-gate-pg-');
  before(async () => {
    cluster = await startPostgres();
    base = await openPostgresDatabase(await cluster.createDatabase('gate'));
    await base.async.sql("INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('st1', 'S', 'local', '', '')");
  });
  after(async () => {
    await base?.close();
    await cluster?.destroy();
    tmp.cleanup();
  });

  test('an upload taken back while its COMMIT was in doubt leaves no row once the database wakes', async () => {
    // One client, so the unit's server process is the one whose pid is read here; its COMMIT is cut off by a SIGSTOP.
    const pool = openPool(cluster.url('gate'), { max: 1, statementTimeoutMs: 1000 });
    const [{ pid }] = await pool.sql<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    let hang = true;
    const db: Db = {
      ...base,
      async: {
        ...pool,
        unit: (body, o) =>
          pool.unit(function* (t) {
            const out = yield* body(t);
            if (hang) process.kill(pid, 'SIGSTOP'); // after the body's last statement: COMMIT meets a hung server
            hang = false;
            return out;
          }, o),
      },
    };
    const nodes = new NodesRepo(db);
    const bus = new EventBus(db);
    const deleted: string[] = [];
    bus.on('folder.changed', (c) => void (c.kind === 'deleted' && deleted.push(c.path)));
    const gate = new WriteGate(
      db,
      nodes,
      bus,
      (id) => ({ id, tenant_id: 1, name: 'S' }),
      () => {},
    );
    const file = join(tmp.dir, 'up.bin');
    writeFileSync(file, 'bytes');
    const st = statSync(file);
    try {
      const e = await gate
        .written(1, 'up.bin', { name: 'up.bin', type: 'file', size: st.size, mtime: st.mtimeMs }, { origin: 'upload', undo: async () => rmSync(file) })
        .catch((x: unknown) => x);
      assert.ok(commitInDoubt(e), `database_busy in doubt (COMMIT met the hung process), got ${String(e)}`);
      assert.equal(existsSync(file), false, 'the bytes were taken back');
      await sleep(2500); // the gate asks meanwhile; the hung process has not committed, so nothing is settled yet
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // The woken process commits the row, then the gate's next look finds the unit decided and removes it.
    for (let i = 0; i < 50 && deleted.length === 0; i++) await sleep(200);
    const row = await base.async.first(base.k.selectFrom('nodes').select('id').where('tenant_id', '=', 1).where('path', '=', 'up.bin'));
    assert.equal(row, undefined, 'the row the woken COMMIT left is gone');
    assert.deepEqual(deleted, ['up.bin'], 'and the folder was told');
    await pool.close();
  });
});
