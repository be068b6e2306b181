import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionsRepo, type SessionRecord } from './sessions.repo';
import { UsersRepo } from './users.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

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
  new UsersRepo(t.db).insert({ email: `s${++user}@example.com`, username: `s${user}`, role: 'user', password_hash: null });

async function session(user_id: number, o: Partial<SessionRecord> = {}): Promise<string> {
  const id = `sid${++sid}`;
  await repo.insert({
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
  await repo.touch(s1, '2026-12-05T11:00:00.000Z');
  const now = '2026-12-05T12:00:00.000Z';
  assert.deepEqual(
    (await repo.live(a, now)).map((s) => s.id),
    [s1, s2],
    'expired ones are not listed',
  );
  assert.deepEqual(await repo.owner(s1), { user_id: a, expires_at: '2099-01-01T00:00:00.000Z' });
  assert.equal(await repo.remove(s1, b), false, "another account's session is not ended");
  assert.equal(await repo.remove(s1, a), true);
  assert.equal(await repo.owner(s1), undefined);
  assert.equal(await repo.sweep(now), 1, 'the expired one is swept');
  const keep = await session(a);
  await session(a);
  assert.equal(await repo.removeOfUser(a, keep), 2, 'every other session ended');
  assert.deepEqual(
    (await repo.live(a, now)).map((s) => s.id),
    [keep],
  );
  assert.equal(await repo.removeOfUser(a), 1);
});

test('two ends of one session racing: exactly one ends it', async () => {
  const a = await account();
  const s = await session(a);
  const ended = await Promise.all([repo.remove(s, a), repo.remove(s, a), repo.remove(s)]);
  assert.equal(ended.filter(Boolean).length, 1, JSON.stringify(ended));
});

test("a session and the caller's statements commit together, or neither does", async () => {
  const a = await account();
  const rec = (id: string): SessionRecord => ({
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
    t.db.k.insertInto('audit').values({ ts: '2026-12-05T10:00:00.000Z', user_id: a, user_email: null, action, resource: null, ip: null, ua: null, meta: '{}' });
  await assert.rejects(
    repo.insert(rec('sid-failed'), function* (u) {
      yield* u.run(audit('session.test.rolled_back'));
      yield* u.sql('INSERT INTO no_such_table VALUES (1)');
    }),
  );
  assert.equal(await repo.owner('sid-failed'), undefined, 'the session is not written');
  await repo.insert(rec('sid-ok'), function* (u) {
    yield* u.run(audit('session.test.committed'));
  });
  assert.equal((await repo.owner('sid-ok'))?.user_id, a);
  const actions = await t.db.async.all(t.db.k.selectFrom('audit').select('action').where('action', 'like', 'session.test.%'));
  assert.deepEqual(
    actions.map((r) => r.action),
    ['session.test.committed'],
  );
});
