import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { migrate } from '..';
import { MIGRATIONS } from '.';
import { SCOPED } from '../tenant-tables';

const NOW = '2026-12-06T22:00:00.000Z';
const upTo = (name: string) => MIGRATIONS.filter((m) => m.name <= name);

const tenantColumn = (db: Database.Database, table: string) =>
  db.prepare(`SELECT "notnull", dflt_value FROM pragma_table_info(?) WHERE name = 'tenant_id'`).get(table) as
    | { notnull: number; dflt_value: string }
    | undefined;

test('every tenant-owned table, whichever migration made it, has tenant_id NOT NULL DEFAULT 1', () => {
  const db = new Database(':memory:');
  migrate(db, MIGRATIONS);
  for (const t of SCOPED) assert.deepEqual(tenantColumn(db, t), { notnull: 1, dflt_value: '1' }, `${t}.tenant_id`);
  db.close();
});

test('the tenants migration keeps every row as tenant 1’s, keys intact, names unique per tenant', () => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  const before = MIGRATIONS.filter((m) => m.name < '20261206220000');
  migrate(db, before);
  db.prepare(`INSERT INTO users (id, email, username, role, created_at, updated_at) VALUES (7, 'Ann@x.test', 'ann', 'admin', ?, ?)`).run(NOW, NOW);
  db.prepare(`INSERT INTO sessions (id, user_id, created_at, expires_at, last_seen_at) VALUES ('s1', 7, ?, ?, ?)`).run(NOW, NOW, NOW);
  db.prepare(`INSERT INTO groups (id, name) VALUES (3, 'team')`).run();
  db.prepare(`INSERT INTO user_groups (user_id, group_id) VALUES (7, 3)`).run();

  assert.deepEqual(migrate(db, upTo('20261206220000-tenants')), ['20261206220000-tenants']);
  assert.equal(db.pragma('foreign_keys', { simple: true }), 1, 'foreign keys are on again');
  assert.deepEqual(db.prepare('SELECT id, slug, status FROM tenants').all(), [{ id: 1, slug: 'default', status: 'active' }]);
  // Tables made after this migration carry `tenant_id` from their own (the test below).
  const made = (t: string) => !!db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(t);
  for (const t of SCOPED.filter(made)) {
    assert.deepEqual(tenantColumn(db, t), { notnull: 1, dflt_value: '1' }, `${t}.tenant_id`);
  }
  assert.deepEqual(db.prepare('SELECT id, email, tenant_id FROM users').all(), [{ id: 7, email: 'Ann@x.test', tenant_id: 1 }]);
  assert.deepEqual(db.prepare('PRAGMA foreign_key_check').all(), []);

  const add = db.prepare(`INSERT INTO users (email, username, role, created_at, updated_at, tenant_id) VALUES (?, ?, 'user', ?, ?, ?)`);
  add.run('ann@X.test', 'ANN', NOW, NOW, 2);
  assert.throws(() => add.run('ann@x.TEST', 'other', NOW, NOW, 1), /UNIQUE/, 'an e-mail stays unique (without case) inside a tenant');
  assert.throws(() => add.run('other@x.test', 'Ann', NOW, NOW, 2), /UNIQUE/, 'so does a username');
  db.prepare(`INSERT INTO groups (name, tenant_id) VALUES ('team', 2)`).run();

  db.prepare('DELETE FROM users WHERE id = 7').run();
  assert.equal((db.prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n, 0, 'the children still cascade from the rebuilt table');
  assert.equal((db.prepare('SELECT count(*) AS n FROM user_groups').get() as { n: number }).n, 0);
  db.close();
});

test('roles per tenant: the rebuild keeps ids and members; a name is unique (without case) inside a tenant only', () => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  migrate(db, upTo('20261206220000-tenants'));
  db.prepare(`INSERT INTO roles (id, name, permissions, created_at, updated_at) VALUES (4, 'Editors', '{"files.write":true}', ?, ?)`).run(NOW, NOW);
  db.prepare(`INSERT INTO users (id, email, username, role, created_at, updated_at, custom_role_id) VALUES (7, 'a@x.test', 'a', 'user', ?, ?, 4)`).run(
    NOW,
    NOW,
  );

  assert.deepEqual(migrate(db, upTo('20261207010000-roles-per-tenant')), ['20261207010000-roles-per-tenant']);
  assert.deepEqual(db.prepare('SELECT id, name, tenant_id FROM roles').all(), [{ id: 4, name: 'Editors', tenant_id: 1 }]);
  assert.deepEqual(db.prepare('PRAGMA foreign_key_check').all(), []);
  const add = db.prepare(`INSERT INTO roles (name, created_at, updated_at, tenant_id) VALUES (?, ?, ?, ?)`);
  add.run('EDITORS', NOW, NOW, 2);
  assert.throws(() => add.run('editors', NOW, NOW, 1), /UNIQUE/);
  db.prepare('DELETE FROM roles WHERE id = 4').run();
  assert.deepEqual(db.prepare('SELECT custom_role_id FROM users').all(), [{ custom_role_id: null }], 'the members still lose it on delete');
  db.close();
});

test('storages per tenant: the rebuild keeps ids, children and the tombstone trigger; a name is unique (without case) inside a tenant only', () => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  migrate(db, upTo('20261207050000-search-gin-pending'));
  db.prepare(`INSERT INTO storages (id, uid, name, driver, created_at, updated_at) VALUES (3, 'st1', 'Photos', 'local', ?, ?)`).run(NOW, NOW);
  db.prepare(`INSERT INTO storage_grants (storage_id, group_name, level) VALUES (3, 'staff', 'viewer')`).run();
  db.prepare(`INSERT INTO users (id, email, username, role, created_at, updated_at) VALUES (7, 'a@x.test', 'a', 'user', ?, ?)`).run(NOW, NOW);
  db.prepare(`INSERT INTO shares (token, kind, owner_id, storage_id, rel, created_at) VALUES ('tok', 'link', 7, 3, 'a.txt', ?)`).run(NOW);

  assert.deepEqual(migrate(db, upTo('20261207050100-storages-per-tenant')), ['20261207050100-storages-per-tenant']);
  assert.deepEqual(db.prepare('SELECT id, name, tenant_id FROM storages').all(), [{ id: 3, name: 'Photos', tenant_id: 1 }]);
  assert.deepEqual(db.prepare('PRAGMA foreign_key_check').all(), []);
  const add = db.prepare(`INSERT INTO storages (uid, name, driver, created_at, updated_at, tenant_id) VALUES (?, ?, 'local', ?, ?, ?)`);
  add.run('st2', 'PHOTOS', NOW, NOW, 2);
  assert.throws(() => add.run('st3', 'photos', NOW, NOW, 1), /UNIQUE/);
  assert.throws(() => add.run('st2', 'Music', NOW, NOW, 1), /UNIQUE/, 'a uid stays unique across the installation');
  db.prepare('DELETE FROM storages WHERE id = 3').run();
  assert.equal((db.prepare('SELECT count(*) AS n FROM storage_grants').get() as { n: number }).n, 0, 'the grants still cascade');
  assert.deepEqual(
    db.prepare('SELECT token, reason FROM share_tombstones').all(),
    [{ token: 'tok', reason: 'storage_removed' }],
    'and its links leave tombstones',
  );
  db.close();
});
