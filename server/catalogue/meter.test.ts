import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DEFAULT_TENANT, openDatabase } from '../db';
import { StoragesRepo, newUid } from './storages.repo';
import { RequestMeter } from './meter';
import { tempDir } from '../../test/helpers/tools';

test('a timer flush while the database is held keeps the counts for the next one, and never throws', async () => {
  const t = tempDir();
  const file = join(t.dir, 'db.sqlite');
  const db = openDatabase(file);
  const other = openDatabase(file); // holds the write lock, as a CLI command or another writer would
  try {
    db.sqlite.pragma('busy_timeout = 5');
    const repo = new StoragesRepo(db);
    const uid = newUid();
    const { id } = (await repo.insert(DEFAULT_TENANT, {
      uid,
      name: 'Bucket',
      driver: 's3',
      config: '{}',
      mount_path: '/',
      sync_mode: 'poll',
      sync_interval_s: 900,
      enabled: 1,
      read_only: 0,
      rbac_enabled: 0,
      replica_target_id: null,
    }))!;
    const meter = new RequestMeter(db, repo, () => ({}));
    const sink = meter.sink(uid, 's3')!;
    for (let i = 0; i < 3; i++) sink('get');
    const stored = () => (db.sqlite.prepare('SELECT get FROM storage_requests WHERE storage_id = ?').pluck().get(id) as number | undefined) ?? 0;

    other.sqlite.prepare('BEGIN IMMEDIATE').run();
    await assert.doesNotReject(() => meter['tick']());
    other.sqlite.prepare('ROLLBACK').run();
    assert.equal(stored(), 0);

    await meter['tick']();
    assert.equal(stored(), 3, 'the held flush’s counts arrive with the next one');
    await meter['tick']();
    assert.equal(stored(), 3, 'and only once');
  } finally {
    void other.close();
    void db.close();
    t.cleanup();
  }
});

test('a timer flush that fails for any other reason is told and kept; the timer never throws', async () => {
  const t = tempDir();
  const db = openDatabase(join(t.dir, 'db.sqlite'));
  try {
    const repo = new StoragesRepo(db);
    const uid = newUid();
    const { id } = (await repo.insert(DEFAULT_TENANT, {
      uid,
      name: 'Bucket',
      driver: 's3',
      config: '{}',
      mount_path: '/',
      sync_mode: 'poll',
      sync_interval_s: 900,
      enabled: 1,
      read_only: 0,
      rbac_enabled: 0,
      replica_target_id: null,
    }))!;
    const told: string[] = [];
    const meter = new RequestMeter(
      db,
      repo,
      () => ({}),
      (m) => told.push(m),
    );
    meter.sink(uid, 's3')!('list');
    // The table gone (a failure that is not "busy"): the flush fails inside its transaction.
    db.sqlite.exec('ALTER TABLE storage_requests RENAME TO storage_requests_away');
    await assert.doesNotReject(() => meter['tick']());
    assert.equal(told.length, 1);
    db.sqlite.exec('ALTER TABLE storage_requests_away RENAME TO storage_requests');
    await meter['tick']();
    assert.equal(db.sqlite.prepare('SELECT list FROM storage_requests WHERE storage_id = ?').pluck().get(id), 1, 'the kept count arrives with the next flush');
  } finally {
    void db.close();
    t.cleanup();
  }
});
