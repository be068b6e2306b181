import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { NotificationsRepo, type NotificationInput } from './notifications.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { DEFAULT_TENANT as T1, type TenantScope } from '../db';

let t: TestDb;
let repo: NotificationsRepo;
before(async () => {
  t = await openTestDb();
  repo = new NotificationsRepo(t.db);
  const { k } = t.db;
  for (const [id, name] of [
    [1, 'a'],
    [2, 'b'],
  ] as const) {
    await t.db.async.run(
      k.insertInto('users').values({
        id,
        tenant_id: 1,
        email: `${name}@x.test`,
        username: name,
        role: 'user',
        disabled: 0,
        auth_driver: 'local',
        created_at: 'now',
        updated_at: 'now',
      }),
    );
  }
});
after(() => t?.close());

const n = (title: string): NotificationInput => ({
  event: 'file.infected',
  severity: 'warning',
  title,
  body: '',
  data: '{}',
  created_at: '2026-12-05T00:00:00.000Z',
});

test('rows per recipient, pruned to the newest `keep` per user; paging, unread count and marking read', async () => {
  for (let i = 1; i <= 5; i++) await repo.insertFor(T1, i <= 2 ? [1, 2] : [1], n(`n${i}`), 3);
  assert.deepEqual(
    (await repo.list(T1, 1)).map((r) => r.title),
    ['n5', 'n4', 'n3'],
    'user 1 keeps its newest three',
  );
  assert.deepEqual(
    (await repo.list(T1, 2)).map((r) => r.title),
    ['n2', 'n1'],
    'user 2 is not pruned by user 1’s rows',
  );
  const [newest] = await repo.list(T1, 1, { limit: 1 });
  assert.deepEqual(
    (await repo.list(T1, 1, { before: newest.id })).map((r) => r.title),
    ['n4', 'n3'],
  );

  assert.equal(await repo.unreadCount(T1, 1), 3);
  assert.equal(await repo.markRead(T1, 2, [newest.id]), 0, 'another user’s row is untouched');
  assert.equal(await repo.markRead(T1, 1, [newest.id]), 1);
  assert.equal(await repo.markRead(T1, 1, [newest.id]), 0, 'a read row is not marked again');
  assert.deepEqual(
    (await repo.list(T1, 1, { unreadOnly: true })).map((r) => r.title),
    ['n4', 'n3'],
  );
  assert.equal(await repo.markRead(T1, 1, []), 0);
  const [a, b] = await Promise.all([repo.markRead(T1, 1), repo.markRead(T1, 1)]);
  assert.equal(a + b, 2, 'two racing "mark all read" calls mark each row once');
  assert.equal(await repo.unreadCount(T1, 1), 0);
  assert.equal(await repo.unreadCount(T1, 2), 2);
});

test("two tenants, the same user id: another tenant's rows are neither listed, counted, marked nor pruned", async () => {
  const T2: TenantScope = { tenant_id: 2 };
  const before = (await repo.list(T1, 2)).map((r) => r.id);
  for (let i = 1; i <= 4; i++) await repo.insertFor(T2, [2], n(`t2-${i}`), 2);
  assert.deepEqual(
    (await repo.list(T2, 2)).map((r) => r.title),
    ['t2-4', 't2-3'],
    'tenant 2 keeps its newest two, and lists only its own',
  );
  assert.deepEqual(
    (await repo.list(T1, 2)).map((r) => r.id),
    before,
    "tenant 1's rows of the same user are neither listed there nor pruned by tenant 2's keep",
  );
  assert.equal(await repo.unreadCount(T2, 2), 2);
  const [theirs] = await repo.list(T2, 2, { limit: 1 });
  assert.equal(await repo.markRead(T1, 2, [theirs.id]), 0, "another tenant's row is not marked by id");
  await repo.markRead(T1, 2);
  assert.equal(await repo.unreadCount(T2, 2), 2, "nor by tenant 1's mark-all");
  assert.equal(await repo.markRead(T2, 2), 2);
  assert.equal(await repo.unreadCount(T2, 2), 0);
});
