import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PendingLogins, PENDING_TTL_MS } from './pending.repo';
import { openTestDb, type TestDb } from '../../../test/helpers/test-database';

let t: TestDb;
before(async () => {
  t = await openTestDb();
});
after(() => t?.close());

const login = (n: number) => ({ issuer: 'https://idp.example', code_verifier: `v${n}`, nonce: `n${n}`, next: '/', redirect_uri: 'http://127.0.0.1/cb' });

test('a started sign-in is taken once; an old one is gone; sweep drops the expired', async () => {
  const repo = new PendingLogins(t.db);
  const now = Date.now();
  assert.equal(await repo.add('s1', login(1), now), true);
  assert.equal(await repo.add('s2', login(2), now - PENDING_TTL_MS - 1), true);
  assert.equal(await repo.add('s3', login(3), now - PENDING_TTL_MS - 1), true);
  const got = await repo.take('s1', now);
  assert.equal(got?.code_verifier, 'v1');
  assert.equal(await repo.take('s1', now), undefined, 'one-time');
  assert.equal(await repo.take('s2', now), undefined, 'too old: removed all the same');
  assert.equal(await repo.sweep(now), 1, 's3 swept');
  assert.equal(await repo.sweep(now), 0);
});

test('ten starts racing for the last two places never pass the cap', async () => {
  const repo = new PendingLogins(t.db, 5);
  for (let i = 0; i < 3; i++) assert.equal(await repo.add(`c${i}`, login(i)), true);
  const got = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => repo.add(`r${i}`, login(100 + i))));
  const stored = got.filter((g) => g.status === 'fulfilled' && g.value === true).length;
  assert.equal(stored, 2, JSON.stringify(got.map((g) => (g.status === 'fulfilled' ? g.value : String(g.reason)))));
  assert.equal(await repo.add('late', login(999)), false, 'full');
});
