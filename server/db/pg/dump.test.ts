/** The PostgreSQL snapshot (self-update's pre-upgrade copy): a real cluster, pg_dump and pg_restore. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { openPostgresDatabase } from '../index';
import { libpqEnv, pgDump } from './dump';
import { needPostgres, startPostgres, type PgCluster } from '../../../test/helpers/postgres';
import { tempDir } from '../../../test/helpers/tools';

const skip = needPostgres();
let cluster: PgCluster;
before(async () => {
  if (!skip) cluster = await startPostgres();
});
after(async () => {
  await cluster?.destroy();
});

test('libpq environment from a database URL: escapes undone, IPv6 unbracketed, sslmode kept', () => {
  assert.deepEqual(libpqEnv('postgres://fd%40x:p%3Aw%2Fd@[::1]:5433/file%20dock?sslmode=require'), {
    PGHOST: '::1',
    PGPORT: '5433',
    PGUSER: 'fd@x',
    PGPASSWORD: 'p:w/d',
    PGDATABASE: 'file dock',
    PGSSLMODE: 'require',
  });
  assert.deepEqual(libpqEnv('postgres://127.0.0.1/db'), { PGHOST: '127.0.0.1', PGDATABASE: 'db' });
});

test('Db.snapshot on PostgreSQL writes a pg_dump archive that restores to the same rows', { skip: skip ?? false }, async () => {
  const url = await cluster.createDatabase('snap_src');
  const db = await openPostgresDatabase(url);
  const t = tempDir('filedock-snap-');
  try {
    await db.async.sql("INSERT INTO settings (key, value, updated_at) VALUES ('snapshot_probe', '\"kept\"', '2026-11-27T00:00:00Z')");
    const file = await db.snapshot(join(t.dir, 'pre-update-1-to-2'));
    assert.equal(file, join(t.dir, 'pre-update-1-to-2.pgdump'));
    assert.ok(existsSync(file));
    const target = await cluster.createDatabase('snap_restored');
    execFileSync('pg_restore', ['--no-owner', '--dbname', 'snap_restored', file], { env: { ...process.env, ...libpqEnv(target) } });
    const c = new pg.Client({ connectionString: target });
    await c.connect();
    try {
      const { rows } = await c.query("SELECT value FROM settings WHERE key = 'snapshot_probe'");
      assert.deepEqual(rows, [{ value: '"kept"' }]);
    } finally {
      await c.end();
    }
    await assert.rejects(pgDump(url, join(t.dir, 'x.pgdump'), '/nonexistent/pg_dump'), /was not found: install the PostgreSQL client tools/);
  } finally {
    await db.close();
    t.cleanup();
  }
});
