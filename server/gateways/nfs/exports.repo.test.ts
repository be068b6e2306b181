import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { NfsExportsRepo, type NfsExportFields } from './exports.repo';
import { DEFAULT_TENANT, type TenantScope } from '../../db';
import { UsersRepo } from '../../auth/users.repo';
import { openTestDb, type TestDb } from '../../../test/helpers/test-database';
import { asyncOnly } from '../../../test/helpers/async-only';

let t: TestDb;
let repo: NfsExportsRepo;
let user = 0;
before(async () => {
  t = await openTestDb();
  repo = new NfsExportsRepo(asyncOnly(t.db));
  user = await new UsersRepo(t.db).insert({ email: 'nfs@example.com', username: 'nfs', role: 'user', password_hash: null });
});
after(() => t?.close());

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };
const input = (path: string, v: Partial<NfsExportFields> = {}): NfsExportFields => ({
  path,
  clients: '127.0.0.1',
  user_id: user,
  key_id: null,
  read_only: false,
  ...v,
});

test('exports on db.async: added with their id, read back with read_only a boolean on both databases, changed field by field, removed once', async () => {
  assert.deepEqual(await repo.list(T1), []);
  const v0 = repo.version;
  const a = await repo.add(T1, input('/Files/a'));
  const b = await repo.add(T1, input('/Files/b', { read_only: true, clients: '10.0.0.0/8' }));
  assert.equal(typeof a.id, 'number');
  assert.equal(a.read_only, false);
  assert.equal(b.read_only, true);
  assert.ok(repo.version > v0, 'a change moves the version');
  assert.deepEqual(await repo.get(T1, b.id), b);
  assert.equal(await repo.get(T1, 999_999), null);
  assert.deepEqual(
    (await repo.list(T1)).map((e) => e.path),
    ['/Files/a', '/Files/b'],
    'oldest first',
  );

  assert.equal(await repo.update(T1, a.id, { read_only: true }), true);
  assert.equal(await repo.update(T1, a.id, {}), true, 'an empty change of an export that exists');
  assert.equal(await repo.update(T1, 999_999, { clients: '::1' }), false);
  assert.equal(await repo.update(T1, 999_999, {}), false);
  // Two admins changing different fields at once: both changes stay.
  await Promise.all([repo.update(T1, a.id, { clients: '192.168.1.0/24' }), repo.update(T1, a.id, { path: '/Files/a2' })]);
  assert.deepEqual(await repo.get(T1, a.id), { ...a, read_only: true, clients: '192.168.1.0/24', path: '/Files/a2' });

  const removed = await Promise.all([repo.remove(T1, b.id), repo.remove(T1, b.id)]);
  assert.deepEqual(removed.filter(Boolean).length, 1, 'of two removals racing, one removes it');
  assert.deepEqual(
    (await repo.list(T1)).map((e) => e.id),
    [a.id],
  );
});

test('tenants: another tenant’s export is neither listed, found, changed nor removed; the gateway reads the tenants it is given', async () => {
  const theirs = await repo.add(T2, input('/Files/theirs'));
  assert.equal(theirs.tenant_id, 2);
  assert.ok(!(await repo.list(T1)).some((e) => e.id === theirs.id));
  assert.equal(await repo.get(T1, theirs.id), null);
  assert.equal(await repo.update(T1, theirs.id, { read_only: true }), false);
  assert.equal(await repo.update(T1, theirs.id, {}), false);
  assert.equal(await repo.remove(T1, theirs.id), false);
  assert.deepEqual(await repo.get(T2, theirs.id), theirs, 'unchanged');
  assert.ok((await repo.among([T1, T2])).some((e) => e.id === theirs.id));
  assert.ok(!(await repo.among([T1])).some((e) => e.id === theirs.id));
  assert.deepEqual(await repo.among([]), []);
  assert.equal(await repo.remove(T2, theirs.id), true);
});
