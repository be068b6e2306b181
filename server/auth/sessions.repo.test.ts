import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionsRepo, type SessionRecord } from './sessions.repo';
import { UsersRepo } from './users.repo';
import { DEFAULT_TENANT } from '../db';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

const T1 = DEFAULT_TENANT;

let t: TestDb;
let repo: SessionsRepo;
let user = 0;
let sid = 0;
before(async () => {
  t = await openTestDb();
  repo = new SessionsRepo(t.db);
});
after(() => t?.close());

const account = async (): Promise<number> =>
  new UsersRepo(t.db).insert(T1, { email: `s${++user}@example.com`, username: `s${user}`, role: 'user', password_hash: null });

async function session(user_id: number, o: Partial<SessionRecord> = {}): Promise<string> {
  const id = `sid${++sid}`;
  await repo.insert(T1, {
    id,
    user_id,
    kind: 'login',
    created_at: '2026-12-05T10:00:00.000Z',
    expires_at: '2099-01-01T00:00:00.000Z',
    last_seen_at: `2026-12-05T10:00:0${sid % 10}.000Z`,
    ip: null,
    ua: null,
    ...o,
  });
  return id;
}

test('live sessions newest seen first; an end is per account and says whether it ended one', async () => {
  const a = await account();
  const b = await account();
  const s1 = await session(a);
  const s2 = await session(a);
  await session(a, { expires_at: '2020-01-01T00:00:00.000Z' });
  await repo.touch(T1, s1, '2026-12-05T11:00:00.000Z');
  const now = '2026-12-05T12:00:00.000Z';
  assert.deepEqual(
    (await repo.live(T1, a, now)).map((s) => s.id),
    [s1, s2],
    'expired ones are not listed',
  );
  assert.deepEqual(await repo.owner(T1, s1), { user_id: a, expires_at: '2099-01-01T00:00:00.000Z' });
  assert.equal(await repo.remove(T1, s1, b), false, "another account's session is not ended");
  assert.equal(await repo.remove(T1, s1, a), true);
  assert.equal(await repo.owner(T1, s1), undefined);
  assert.equal(await repo.sweep(T1, now), 1, 'the expired one is swept');
  const keep = await session(a);
  await session(a);
  assert.equal(await repo.removeOfUser(T1, a, keep), 2, 'every other session ended');
  assert.deepEqual(
    (await repo.live(T1, a, now)).map((s) => s.id),
    [keep],
  );
  assert.equal(await repo.removeOfUser(T1, a), 1);
});

test('two ends of one session racing: exactly one ends it', async () => {
  const a = await account();
  const s = await session(a);
  const ended = await Promise.all([repo.remove(T1, s, a), repo.remove(T1, s, a), repo.remove(T1, s)]);
  assert.equal(ended.filter(Boolean).length, 1, JSON.stringify(ended));
});

test("a session and the caller's statements commit together, or neither does", async () => {
  const a = await account();
  const rec = (id: string): Omit<SessionRecord, 'tenant_id'> => ({
    id,
    user_id: a,
    kind: 'login',
    created_at: '',
    expires_at: '2099-01-01T00:00:00.000Z',
    last_seen_at: '',
    ip: null,
    ua: null,
  });
  const audit = (action: string) =>
    t.db.k
      .insertInto('audit')
      .values({ tenant_id: 1, ts: '2026-12-05T10:00:00.000Z', user_id: a, user_email: null, action, resource: null, ip: null, ua: null, meta: '{}' });
  await assert.rejects(
    repo.insert(T1, rec('sid-failed'), function* (u) {
      yield* u.run(audit('session.test.rolled_back'));
      yield* u.sql('INSERT INTO no_such_table VALUES (1)');
    }),
  );
  assert.equal(await repo.owner(T1, 'sid-failed'), undefined, 'the session is not written');
  await repo.insert(T1, rec('sid-ok'), function* (u) {
    yield* u.run(audit('session.test.committed'));
  });
  assert.equal((await repo.owner(T1, 'sid-ok'))?.user_id, a);
  const actions = await t.db.async.all(t.db.k.selectFrom('audit').select('action').where('tenant_id', '=', 1).where('action', 'like', 'session.test.%'));
  assert.deepEqual(
    actions.map((r) => r.action),
    ['session.test.committed'],
  );
});

test('another tenant’s session is not found, touched nor ended by its id', async () => {
  const a = await account();
  const s = await session(a);
  const T2 = { tenant_id: 2 };
  assert.equal(await repo.owner(T2, s), undefined);
  assert.equal(await repo.remove(T2, s), false);
  assert.equal(await repo.removeOfUser(T2, a), 0);
  await repo.touch(T2, s, '2099-01-01T00:00:00.000Z');
  assert.deepEqual(await repo.live(T2, a, '2000-01-01T00:00:00.000Z'), []);
  assert.notEqual((await repo.live(T1, a, '2000-01-01T00:00:00.000Z'))[0].last_seen_at, '2099-01-01T00:00:00.000Z', 'nor touched');
  assert.equal((await repo.owner(T1, s))?.user_id, a, 'still there for its own tenant');
});
