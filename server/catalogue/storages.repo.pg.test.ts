/**
 * The in-memory storage rows on PostgreSQL with two instances (docs/postgresql.md, "The storages cache"):
 * a repository reads the rows once, not per request; this instance's writes are seen at once, another
 * instance's once its change notice arrives (after its COMMIT), and nothing is re-read while nothing changed.
 * A CLI command is such an instance: the storage it adds is known to the running one.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_TENANT, openPgChannel, openPostgresDatabase, type ChangeChannel, type Db } from '../db';
import { StoragesRepo, newUid } from './storages.repo';
import { needPostgres, startPostgres, type PgCluster } from '../../test/helpers/postgres';
import { tempDir } from '../../test/helpers/tools';
import { SERVICE_CLI } from '../../test/helpers/child-server';

const T1 = DEFAULT_TENANT;

const row = (name: string) => ({
  uid: newUid(),
  name,
  driver: 'local',
  config: '{}',
  mount_path: '/',
  sync_mode: 'poll' as const,
  sync_interval_s: 900,
  enabled: 1,
  read_only: 0,
  rbac_enabled: 0,
  replica_target_id: null,
});
const skip = needPostgres();
let cluster: PgCluster;
const open: Array<Db | ChangeChannel> = [];

/** One instance: a database handle, its change channel, and its repository's copy read. */
async function instance(url: string, id: string) {
  const db = await openPostgresDatabase(url);
  const channel = await openPgChannel(url, id);
  open.push(channel, db);
  const repo = new StoragesRepo(db);
  repo.attachChannel(channel);
  await repo.load();
  return { db, repo };
}

/** Polls `fn` until it is true or `ms` passed; returns how long it took. */
async function within(ms: number, fn: () => boolean): Promise<number> {
  const t0 = Date.now();
  while (!fn()) {
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return Date.now() - t0;
}

before(async () => {
  if (!skip) cluster = await startPostgres();
});
after(async () => {
  for (const x of open.reverse()) await x.close();
  await cluster?.destroy();
});

test('storages cache on PostgreSQL: own writes at once, another instance’s after its notice, no re-read otherwise', { skip: skip ?? false }, async () => {
  const url = await cluster.createDatabase('storages_cache');
  const a = await instance(url, 'a');
  const b = await instance(url, 'b');
  const { id } = (await a.repo.insert(T1, row('Photos')))!;
  assert.equal(a.repo.byNameOrUid(T1, 'photos')?.id, id, 'own insert seen at once');
  await within(1000, () => b.repo.byNameOrUid(T1, 'Photos')?.id === id);

  // Nothing changed: B answers from its copy without a statement (the copy is the same frozen object).
  const before = b.repo.byId(T1, id);
  assert.equal(b.repo.byId(T1, id), before, 'no re-read while nothing changed');

  await a.repo.update(T1, id, { name: 'Pictures' });
  await a.repo.replaceGrants(T1, id, [{ user_id: null, group: 'staff', level: 'editor' }]);
  const took = await within(1000, () => b.repo.byNameOrUid(T1, 'pictures')?.id === id && b.repo.grants(T1, id).length === 1);
  assert.deepEqual(
    b.repo.grants(T1, id).map((g) => g.group),
    ['staff'],
    'grants follow with the rows',
  );
  assert.ok(took < 1000, `seen after ${took} ms`);

  // A refused change (the name is taken) writes nothing and leaves both copies as they were.
  await b.repo.insert(T1, row('Music'));
  assert.equal(await b.repo.update(T1, id, { name: 'music' }), false);
  assert.equal(b.repo.byId(T1, id)?.name, 'Pictures');
  await within(1000, () => !!a.repo.byNameOrUid(T1, 'Music'));
  assert.equal(a.repo.byId(T1, id)?.name, 'Pictures');

  await b.repo.markSynced(T1, id);
  await within(1000, () => !!a.repo.byId(T1, id)?.last_sync_at);
  await a.repo.delete(T1, id);
  await within(1000, () => b.repo.byId(T1, id) === undefined && b.repo.grants(T1, id).length === 0);
});

test('a storage added by a CLI command on PostgreSQL reaches a running instance’s cache', { skip: skip ?? false }, async () => {
  const url = await cluster.createDatabase('storages_cli');
  const a = await instance(url, 'a');
  assert.equal(a.repo.byNameOrUid(T1, 'Archive'), undefined);
  const t = tempDir('filedock-cli-pg-');
  try {
    mkdirSync(join(t.dir, 'archive'));
    const r = spawnSync(
      process.execPath,
      [...SERVICE_CLI, 'storage', 'add', '--name', 'Archive', '--driver', 'local', '--config', JSON.stringify({ path: join(t.dir, 'archive') })],
      {
        env: { ...process.env, SERVICE_DATABASE_URL: url, SERVICE_DATA_DIR: join(t.dir, 'data'), SERVICE_UPDATE_CHECK: '0' },
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    assert.equal(r.status, 0, r.stderr);
    // The notice waited while spawnSync held this process; the re-read then may need a new pooled connection.
    await within(10_000, () => a.repo.byNameOrUid(T1, 'archive')?.driver === 'local');
  } finally {
    t.cleanup();
  }
});
