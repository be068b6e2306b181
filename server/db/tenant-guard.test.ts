import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { openDatabase, type DB, type SqliteDb } from '.';
import { MIGRATIONS } from './migrations';
import { AppError } from '../errors';
import { tempDir } from '../../test/helpers/tools';

/** The row types with the column, whichever tables `SCOPED` holds today. */
type Tenanted = Omit<DB, 'users' | 'groups' | 'sessions'> & {
  users: DB['users'] & { tenant_id: number };
  groups: DB['groups'] & { tenant_id: number };
  sessions: DB['sessions'] & { tenant_id: number };
};
const NOW = '2026-12-06T22:00:00.000Z';
/** The guard over tables of its own, so these tests hold whatever `SCOPED` holds today. */
const refused = (e: unknown) => e instanceof AppError && e.code === 'internal' && /tenant guard/.test(e.message);

describe('the tenant guard on real queries (SQLite file)', () => {
  let db: SqliteDb;
  let off: SqliteDb;
  let cleanup: () => void;
  before(async () => {
    const d = tempDir('filedock-guard-');
    cleanup = d.cleanup;
    db = openDatabase(join(d.dir, 'db.sqlite'), MIGRATIONS, { tenantGuard: ['users', 'groups', 'sessions'] });
    await db.async.run(
      (db.k as unknown as Kysely<Tenanted>).insertInto('users').values(
        [1, 2].map((tenant_id) => ({
          tenant_id,
          email: 'a@x.test',
          username: 'a',
          role: 'user' as const,
          disabled: 0,
          auth_driver: 'local',
          created_at: NOW,
          updated_at: NOW,
        })),
      ),
    );
    off = openDatabase(join(d.dir, 'db.sqlite'), MIGRATIONS, { tenantGuard: false });
  });
  after(async () => {
    await db?.close();
    await off?.close();
    cleanup?.();
  });
  const k = () => db.k as unknown as Kysely<Tenanted>;

  test('a select of a scoped table without its tenant throws; with it, it runs and sees that tenant only', async () => {
    await assert.rejects(db.async.all(k().selectFrom('users').selectAll().where('username', '=', 'a')), refused);
    const rows = await db.async.all(k().selectFrom('users').select(['id', 'tenant_id']).where('tenant_id', '=', 2).where('username', '=', 'a'));
    assert.deepEqual(
      rows.map((r) => Number(r.tenant_id)),
      [2],
    );
    assert.equal((await db.async.all(k().selectFrom('users').select('id').where('tenant_id', 'in', [1, 2]))).length, 2, 'IN names the tenants too');
  });

  test('the predicate must bind: under an OR, or on another table’s column, it does not count', async () => {
    await assert.rejects(
      db.async.all(
        k()
          .selectFrom('users')
          .select('id')
          .where((eb) => eb.or([eb('tenant_id', '=', 1), eb('id', '>', 0)])),
      ),
      refused,
    );
    await assert.rejects(
      db.async.all(k().selectFrom('users as u').innerJoin('sessions as s', 's.user_id', 'u.id').select('u.id').where('s.tenant_id', '=', 1)),
      refused,
    );
    await assert.rejects(db.async.all(k().selectFrom('users').select('id').where('tenant_id', '>', 0)), refused, 'only = or IN pins a tenant');
    const aliased = await db.async.all(k().selectFrom('users as u').select('u.id').where('u.tenant_id', '=', 1));
    assert.equal(aliased.length, 1, 'a predicate through the alias counts');
  });

  test('a join is reached through its FROM row; a subquery is checked on its own', async () => {
    const joined = db.async.all(k().selectFrom('sessions as s').innerJoin('users as u', 'u.id', 's.user_id').select('u.email').where('s.tenant_id', '=', 1));
    assert.deepEqual(await joined, []);
    const sub = (pinned: boolean) =>
      k()
        .selectFrom('docserver_saves')
        .select('node_id')
        .where('node_id', 'in', (eb) => {
          const q = eb.selectFrom('users').select('id');
          return pinned ? q.where('tenant_id', '=', 1) : q;
        });
    await assert.rejects(db.async.all(sub(false)), refused);
    assert.deepEqual(await db.async.all(sub(true)), []);
    await assert.rejects(
      db.async.all(
        k()
          .with('w', (qc) => qc.selectFrom('users').select('id'))
          .selectFrom('w')
          .select('id'),
      ),
      refused,
      'a CTE is a query too',
    );
  });

  test('updates, deletes and inserts name their tenant', async () => {
    await assert.rejects(db.async.run(k().updateTable('users').set({ language: 'tr' }).where('id', '=', 1)), refused);
    assert.equal(await db.async.run(k().updateTable('users').set({ language: 'tr' }).where('id', '=', 1).where('tenant_id', '=', 1)), 1);
    await assert.rejects(db.async.run(k().deleteFrom('sessions').where('id', '=', 'x')), refused);
    assert.equal(await db.async.run(k().deleteFrom('sessions').where('tenant_id', '=', 1).where('id', '=', 'x')), 0);
    const row = { name: 'g' };
    await assert.rejects(
      db.async.run(
        k()
          .insertInto('groups')
          .values(row as { name: string; tenant_id: number }),
      ),
      refused,
    );
    assert.equal(
      await db.async.run(
        k()
          .insertInto('groups')
          .values({ ...row, tenant_id: 2 }),
      ),
      1,
    );
  });

  test('tables not scoped yet, and a database with the guard off, pass untouched', async () => {
    assert.ok(Array.isArray(await db.async.all(k().selectFrom('docserver_saves').select('node_id'))));
    assert.equal((await off.async.all(off.k.selectFrom('users').select('id'))).length, 2);
  });
});
