import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { LoginFailuresRepo } from './login-failures.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: LoginFailuresRepo;
before(async () => {
  t = await openTestDb();
  repo = new LoginFailuresRepo(t.db);
});
after(() => t?.close());

const T0 = 1_800_000_000_000;
const WINDOW = 60_000;
const LOCK = 30_000;

test('one upsert counts each failure, locks at the limit and starts a new window after the lock', () => {
  const bump = (key: string, now: number) => repo.bump(key, 3, WINDOW, LOCK, now);
  assert.deepEqual(bump('login|a:bob', T0), { failures: 1, firstAt: T0, lockedUntil: 0 });
  assert.deepEqual(bump('login|a:bob', T0 + 1), { failures: 2, firstAt: T0, lockedUntil: 0 });
  assert.deepEqual(bump('login|a:eve', T0 + 1), { failures: 1, firstAt: T0 + 1, lockedUntil: 0 }, 'keys count apart');
  assert.deepEqual(bump('login|a:bob', T0 + 2), { failures: 3, firstAt: T0, lockedUntil: T0 + 2 + LOCK }, 'the third failure locks');
  assert.deepEqual(repo.get('login|a:bob'), { failures: 3, firstAt: T0, lockedUntil: T0 + 2 + LOCK });
  assert.equal(bump('login|a:bob', T0 + 3).failures, 4, 'a failure during the lock still counts');
  const after = bump('login|a:bob', T0 + 3 + LOCK + 1);
  assert.deepEqual(after, { failures: 1, firstAt: T0 + 3 + LOCK + 1, lockedUntil: 0 }, 'after the lock a new window');
  assert.deepEqual(bump('login|a:eve', T0 + 2 + WINDOW), { failures: 1, firstAt: T0 + 2 + WINDOW, lockedUntil: 0 }, 'a passed window starts again');

  repo.prune(T0 + 10 * WINDOW, WINDOW);
  assert.equal(repo.get('login|a:eve'), undefined, 'pruned: its lock and window passed');
  bump('login|a:kim', T0);
  repo.forget('login|a:kim');
  assert.equal(repo.get('login|a:kim'), undefined);
});
