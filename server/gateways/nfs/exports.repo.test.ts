import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { NfsExportsRepo, type NfsExportInput } from './exports.repo';
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

const input = (path: string, v: Partial<NfsExportInput> = {}): NfsExportInput => ({
  path,
  clients: '127.0.0.1',
  user_id: user,
  key_id: null,
  read_only: false,
  tenant_id: 1,
  ...v,
});

test('exports on db.async: added with their id, read back with read_only a boolean on both databases, changed field by field, removed once', async () => {
  assert.deepEqual(await repo.list(), []);
  const v0 = repo.version;
  const a = await repo.add(input('/Files/a'));
  const b = await repo.add(input('/Files/b', { read_only: true, clients: '10.0.0.0/8' }));
  assert.equal(typeof a.id, 'number');
  assert.equal(a.read_only, false);
  assert.equal(b.read_only, true);
  assert.ok(repo.version > v0, 'a change moves the version');
  assert.deepEqual(await repo.get(b.id), b);
  assert.equal(await repo.get(999_999), null);
  assert.deepEqual(
    (await repo.list()).map((e) => e.path),
    ['/Files/a', '/Files/b'],
    'oldest first',
  );

  assert.equal(await repo.update(a.id, { read_only: true }), true);
  assert.equal(await repo.update(a.id, {}), true, 'an empty change of an export that exists');
  assert.equal(await repo.update(999_999, { clients: '::1' }), false);
  assert.equal(await repo.update(999_999, {}), false);
  // Two admins changing different fields at once: both changes stay.
  await Promise.all([repo.update(a.id, { clients: '192.168.1.0/24' }), repo.update(a.id, { path: '/Files/a2' })]);
  assert.deepEqual(await repo.get(a.id), { ...a, read_only: true, clients: '192.168.1.0/24', path: '/Files/a2' });

  const removed = await Promise.all([repo.remove(b.id), repo.remove(b.id)]);
  assert.deepEqual(removed.filter(Boolean).length, 1, 'of two removals racing, one removes it');
  assert.deepEqual(
    (await repo.list()).map((e) => e.id),
    [a.id],
  );
});
