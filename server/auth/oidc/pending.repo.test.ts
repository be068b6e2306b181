import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PendingLogins, PENDING_TTL_MS } from './pending.repo';
import { openTestDb, type TestDb } from '../../../test/helpers/test-database';
import { DEFAULT_TENANT, type TenantScope } from '../../db';

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };

let t: TestDb;
before(async () => {
  t = await openTestDb();
});
after(() => t?.close());

const login = (n: number) => ({ issuer: 'https://idp.example', code_verifier: `v${n}`, nonce: `n${n}`, next: '/', redirect_uri: 'http://127.0.0.1/cb' });

test('a started sign-in is taken once; an old one is gone; sweep drops the expired', async () => {
  const repo = new PendingLogins(t.db);
  const now = Date.now();
  assert.equal(await repo.add(T1, 's1', login(1), now), true);
  assert.equal(await repo.add(T1, 's2', login(2), now - PENDING_TTL_MS - 1), true);
  assert.equal(await repo.add(T1, 's3', login(3), now - PENDING_TTL_MS - 1), true);
  const got = await repo.take(T1, 's1', now);
  assert.equal(got?.code_verifier, 'v1');
  assert.equal(await repo.take(T1, 's1', now), undefined, 'one-time');
  assert.equal(await repo.take(T1, 's2', now), undefined, 'too old: removed all the same');
  assert.equal(await repo.sweep(T1, now), 1, 's3 swept');
  assert.equal(await repo.sweep(T1, now), 0);
});

test('ten starts racing for the last two places never pass the cap', async () => {
  const repo = new PendingLogins(t.db, 5);
  for (let i = 0; i < 3; i++) assert.equal(await repo.add(T1, `c${i}`, login(i)), true);
  const got = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => repo.add(T1, `r${i}`, login(100 + i))));
  const stored = got.filter((g) => g.status === 'fulfilled' && g.value === true).length;
  assert.equal(stored, 2, JSON.stringify(got.map((g) => (g.status === 'fulfilled' ? g.value : String(g.reason)))));
  assert.equal(await repo.add(T1, 'late', login(999)), false, 'full');
});

test('two tenants: a started sign-in is taken only in its tenant; each counts and sweeps its own', async () => {
  const repo = new PendingLogins(t.db, 2);
  const T3: TenantScope = { tenant_id: 3 };
  const now = Date.now();
  assert.equal(await repo.add(T2, 't2-a', login(1), now), true);
  assert.equal(await repo.add(T2, 't2-b', login(2), now), true);
  assert.equal(await repo.add(T2, 't2-c', login(3), now), false, 'tenant 2 is full');
  assert.equal(await repo.add(T3, 'gate', login(4), now), true, "tenant 2's waiting rows do not count against another tenant");
  assert.equal(await repo.take(T1, 't2-a', now), undefined, "tenant 1 cannot take tenant 2's state");
  assert.equal(await repo.sweep(T3, now + PENDING_TTL_MS + 1), 1, "tenant 3's sweep removes its own row only");
  const got = await repo.take(T2, 't2-a', now);
  assert.deepEqual([got?.code_verifier, got?.tenant_id], ['v1', 2], 'the row keeps its tenant for the callback');
});
