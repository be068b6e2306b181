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

test('one upsert counts each failure, locks at the limit and starts a new window after the lock', async () => {
  const bump = (key: string, now: number) => repo.bump(key, 3, WINDOW, LOCK, now);
  assert.deepEqual(await bump('login|a:bob', T0), { failures: 1, firstAt: T0, lockedUntil: 0 });
  assert.deepEqual(await bump('login|a:bob', T0 + 1), { failures: 2, firstAt: T0, lockedUntil: 0 });
  assert.deepEqual(await bump('login|a:eve', T0 + 1), { failures: 1, firstAt: T0 + 1, lockedUntil: 0 }, 'keys count apart');
  assert.deepEqual(await bump('login|a:bob', T0 + 2), { failures: 3, firstAt: T0, lockedUntil: T0 + 2 + LOCK }, 'the third failure locks');
  assert.deepEqual(await repo.get('login|a:bob'), { failures: 3, firstAt: T0, lockedUntil: T0 + 2 + LOCK });
  assert.equal((await bump('login|a:bob', T0 + 3)).failures, 4, 'a failure during the lock still counts');
  const after = await bump('login|a:bob', T0 + 3 + LOCK + 1);
  assert.deepEqual(after, { failures: 1, firstAt: T0 + 3 + LOCK + 1, lockedUntil: 0 }, 'after the lock a new window');
  assert.deepEqual(await bump('login|a:eve', T0 + 2 + WINDOW), { failures: 1, firstAt: T0 + 2 + WINDOW, lockedUntil: 0 }, 'a passed window starts again');

  await repo.prune(T0 + 10 * WINDOW, WINDOW);
  assert.equal(await repo.get('login|a:eve'), undefined, 'pruned: its lock and window passed');
  await bump('login|a:kim', T0);
  await repo.forget('login|a:kim');
  assert.equal(await repo.get('login|a:kim'), undefined);
});

test('twenty failures of one key at once all count, and the limit locks it once', async () => {
  const got = await Promise.all(Array.from({ length: 20 }, () => repo.bump('login|a:race', 5, WINDOW, LOCK, T0)));
  assert.deepEqual(
    got.map((c) => c.failures).sort((a, b) => a - b),
    Array.from({ length: 20 }, (_, i) => i + 1),
    'each bump saw its own count',
  );
  assert.deepEqual(await repo.get('login|a:race'), { failures: 20, firstAt: T0, lockedUntil: T0 + LOCK });
});
