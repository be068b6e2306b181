import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { migrate } from '..';
import { MIGRATIONS } from '.';

const NOW = '2026-12-07T18:00:00.000Z';
const MINE = '20261207180100-replication-docserver-tenant';

test('replication and document-server rows take their owner’s tenant; a link across tenants is dropped; target names per tenant', () => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  migrate(
    db,
    MIGRATIONS.filter((m) => m.name < MINE),
  );
  const target = db.prepare(`INSERT INTO replica_targets (id, uid, name, driver, created_at, updated_at) VALUES (?, ?, ?, 'local', ?, ?)`);
  target.run(1, 'rt1', 'Shared', NOW, NOW);
  target.run(2, 'rt2', 'Spare', NOW, NOW);
  const storage = db.prepare(
    `INSERT INTO storages (id, uid, name, driver, replica_target_id, tenant_id, created_at, updated_at) VALUES (?, ?, ?, 'local', ?, ?, ?, ?)`,
  );
  // Target 1 first linked by a tenant-2 storage, then by a tenant-1 one (targets were the installation's).
  storage.run(10, 's10', 'Two', 1, 2, NOW, NOW);
  storage.run(11, 's11', 'One', 1, 1, NOW, NOW);
  db.prepare(
    `INSERT INTO replica_failures (storage_id, rel, op, code, message, created_at, updated_at) VALUES (10, 'a.txt', 'write', 'REPLICA_WRITE_FAIL', 'x', ?, ?)`,
  ).run(NOW, NOW);
  db.prepare(
    `INSERT INTO nodes (id, tenant_id, storage_id, dir, name, path, type, size, mtime, sort_key, updated_at) VALUES (5, 2, 10, '', 'd.docx', 'd.docx', 'file', 0, 0, 'd.docx', '')`,
  ).run();
  db.prepare(`INSERT INTO docserver_saves (node_id, doc_key, lastsave, etag, saved_at) VALUES (5, 'k', 1, 'e', ?)`).run(NOW);

  assert.deepEqual(
    migrate(
      db,
      MIGRATIONS.filter((m) => m.name <= MINE),
    ),
    [MINE],
  );
  assert.deepEqual(db.prepare('SELECT id, name, tenant_id FROM replica_targets ORDER BY id').all(), [
    { id: 1, name: 'Shared', tenant_id: 2 },
    { id: 2, name: 'Spare', tenant_id: 1 },
  ]);
  assert.deepEqual(db.prepare('SELECT id, replica_target_id FROM storages ORDER BY id').all(), [
    { id: 10, replica_target_id: 1 },
    { id: 11, replica_target_id: null },
  ]);
  assert.deepEqual(db.prepare('SELECT storage_id, tenant_id FROM replica_failures').all(), [{ storage_id: 10, tenant_id: 2 }]);
  assert.deepEqual(db.prepare('SELECT node_id, tenant_id FROM docserver_saves').all(), [{ node_id: 5, tenant_id: 2 }]);
  const add = db.prepare(`INSERT INTO replica_targets (uid, name, driver, tenant_id, created_at, updated_at) VALUES (?, ?, 'local', ?, ?, ?)`);
  add.run('rt3', 'Shared', 1, NOW, NOW);
  assert.throws(() => add.run('rt4', 'Shared', 2, NOW, NOW), /UNIQUE/, 'a name stays unique inside a tenant');
  assert.throws(() => add.run('rt1', 'Other', 1, NOW, NOW), /UNIQUE/, 'a uid stays the installation’s');
  assert.deepEqual(db.prepare('PRAGMA foreign_key_check').all(), []);
  db.close();
});
