/**
 * Every migration runs on both dialects. SQLite: the port to the portable
 * builder changed nothing (the snapshot was taken from the raw-SQL migrations
 * before the port; existing databases keep their applied names). PostgreSQL:
 * an empty database migrates to the same tables, columns, keys and indexes,
 * and the dialect-specific parts (citext, the tombstone trigger, identities,
 * search indexes) behave.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { migrate } from '..';
import { MIGRATIONS } from '.';
import { migratePostgres, UnportedMigrationError } from '../pg/migrate';
import { commonFromPostgres, commonFromSqlite, sqliteShape } from '../../../test/helpers/schema-shape';
import { needPostgres, startPostgres, type PgCluster } from '../../../test/helpers/postgres';

const snapshot = JSON.parse(readFileSync(new URL('./sqlite-shape.snapshot.json', import.meta.url), 'utf8')) as {
  migrations: string[];
  shape: unknown;
};

describe('migrations on SQLite', () => {
  test('the ported migrations build exactly the schema the raw-SQL ones built', () => {
    const db = new Database(':memory:');
    const names = new Set(snapshot.migrations);
    const applied = migrate(
      db,
      MIGRATIONS.filter((m) => names.has(m.name)),
    );
    assert.deepEqual(applied, snapshot.migrations, 'every migration of the snapshot still exists under its name (existing databases apply nothing again)');
    assert.deepEqual(JSON.parse(JSON.stringify(sqliteShape(db))), snapshot.shape);
    db.close();
  });

  test('a database migrated before sees no pending migration of the snapshot', () => {
    const db = new Database(':memory:');
    migrate(db, MIGRATIONS);
    assert.deepEqual(migrate(db, MIGRATIONS), []);
    db.close();
  });
});

describe('every migration has a PostgreSQL form', () => {
  test('no migration is SQLite-only', () => {
    const unported = MIGRATIONS.filter((m) => m.postgres === undefined).map((m) => m.name);
    assert.deepEqual(unported, [], `not ported to PostgreSQL (docs/postgresql.md, "Writing a migration"): ${unported.join(', ')}`);
  });
});

const skip = needPostgres();
describe('migrations on PostgreSQL', { skip: skip ?? false }, () => {
  let cluster: PgCluster;
  let c: pg.Client;
  before(async () => {
    cluster = await startPostgres();
    c = new pg.Client(await cluster.createDatabase('migrations'));
    await c.connect();
  });
  after(async () => {
    await c?.end();
    await cluster?.destroy();
  });

  test('an empty database migrates to the same tables, columns, keys and indexes as SQLite', async () => {
    const applied = await migratePostgres(c, MIGRATIONS);
    assert.equal(applied.length, MIGRATIONS.length);
    assert.deepEqual(await migratePostgres(c, MIGRATIONS), [], 'a second run applies nothing');

    const lite = new Database(':memory:');
    migrate(lite, MIGRATIONS);
    const want = commonFromSqlite(lite);
    lite.close();
    assert.ok(want.indexes.includes('nodes.nodes_search_keys'));
    want.indexes = want.indexes.filter((i) => i !== 'nodes.nodes_search_keys');
    const got = await commonFromPostgres(c);
    // The one designed difference: search is FTS5 on SQLite, its hits ordered on an index of their sort keys
    // (20261207080000-search-keys); on PostgreSQL a table under trigram and word indexes for text, and a
    // trigram index on node names.
    const search = got.tables.search_fts;
    assert.deepEqual(search, { columns: ['rowid not null pk1', 'name', 'body', 'meta'], fks: [] });
    delete got.tables.search_fts;
    const pgOnly = (i: string) => i.startsWith('search_fts.') || i === 'nodes.nodes_name_trgm';
    assert.deepEqual(got.indexes.filter(pgOnly), [
      'nodes.nodes_name_trgm',
      'search_fts.search_fts_body_trgm',
      'search_fts.search_fts_body_words',
      'search_fts.search_fts_meta_trgm',
    ]);
    got.indexes = got.indexes.filter((i) => !pgOnly(i));
    assert.deepEqual(Object.keys(got.tables).sort(), Object.keys(want.tables).sort());
    for (const t of Object.keys(want.tables)) assert.deepEqual(got.tables[t], want.tables[t], `table ${t}`);
    assert.deepEqual(got.indexes, want.indexes);
  });

  test('dialect-specific parts behave: case-free names, identities, the tombstone trigger, trigram search', async () => {
    const now = new Date().toISOString();
    const u = await c.query(
      `INSERT INTO users (email, username, role, created_at, updated_at) VALUES ('Ann@Example.com', 'ann', 'admin', $1, $1) RETURNING id`,
      [now],
    );
    assert.equal(u.rows[0].id, '1', 'identity starts at 1 (bigint comes back as text from pg)');
    await assert.rejects(
      c.query(`INSERT INTO users (email, username, role, created_at, updated_at) VALUES ('ann@example.COM', 'ann2', 'user', $1, $1)`, [now]),
      /users_tenant_email/,
      'e-mails are unique (in a tenant) without regard to case, as with COLLATE NOCASE',
    );
    const found = await c.query(`SELECT id FROM users WHERE email = 'ANN@EXAMPLE.COM'`);
    assert.equal(found.rowCount, 1);
    await assert.rejects(c.query(`INSERT INTO users (email, username, role, created_at, updated_at) VALUES ('b@x', 'b', 'boss', $1, $1)`, [now]), /check/);

    const s = await c.query(`INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('u1', 'Files', 'local', $1, $1) RETURNING id`, [now]);
    await c.query(`INSERT INTO shares (token, owner_id, storage_id, rel, created_at) VALUES ('tok1', 1, $1, 'a.txt', $2)`, [s.rows[0].id, now]);
    await c.query(`DELETE FROM storages WHERE id = $1`, [s.rows[0].id]);
    const tomb = await c.query(`SELECT token, kind, reason, created_at FROM share_tombstones`);
    assert.equal(tomb.rowCount, 1);
    assert.equal(tomb.rows[0].reason, 'storage_removed');
    assert.match(tomb.rows[0].created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'the same ISO form as SQLite strftime');
    assert.equal((await c.query(`SELECT count(*)::int AS n FROM shares`)).rows[0].n, 0, 'the cascade still ran');

    const s2 = await c.query(`INSERT INTO storages (uid, name, driver, created_at, updated_at) VALUES ('u2', 'More', 'local', $1, $1) RETURNING id`, [now]);
    await c.query(
      `INSERT INTO nodes (storage_id, dir, name, path, type, sort_key, updated_at) SELECT $1, '', 'report-' || g || '.pdf', 'report-' || g || '.pdf', 'file', '', $2 FROM generate_series(1, 2000) g`,
      [s2.rows[0].id, now],
    );
    await c.query('ANALYZE nodes');
    await c.query('SET enable_seqscan = off');
    const plan = (await c.query(`EXPLAIN SELECT id FROM nodes WHERE name ILIKE '%RT-1999%'`)).rows.map((r) => r['QUERY PLAN']).join('\n');
    await c.query('RESET enable_seqscan');
    assert.match(plan, /nodes_name_trgm/, 'a substring search on names can use the trigram index');
    const hits = await c.query(`SELECT name FROM nodes WHERE name ILIKE '%RT-1999%'`);
    assert.deepEqual(
      hits.rows.map((r) => r.name),
      ['report-1999.pdf'],
    );
  });

  test('a migration without a PostgreSQL form stops before any statement runs', async () => {
    const db = await cluster.createDatabase('unported');
    const c2 = new pg.Client(db);
    await c2.connect();
    try {
      const legacy = { name: '29990101000000-legacy', sql: 'CREATE TABLE legacy (id INTEGER PRIMARY KEY)' };
      await assert.rejects(
        migratePostgres(c2, [...MIGRATIONS, legacy]),
        (e: unknown) => e instanceof UnportedMigrationError && /29990101000000-legacy/.test(e.message),
      );
      const n = await c2.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> '_migrations'`);
      assert.equal(n.rows[0].n, 0, 'nothing half-created');
    } finally {
      await c2.end();
    }
  });
});
