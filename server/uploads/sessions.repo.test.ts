/**
 * The upload sessions repository on SQLite and (TEST_DATABASE=postgres) PostgreSQL, its read-decide-write
 * families raced by callers at once: sessions opened for the last room of a quota, a finalize claimed, a part
 * recorded while a finalize claims, two sweeps of the same expired sessions. (The lease between two
 * instances: sessions.lease.test.ts.) Two tenants: another tenant's session and parts are neither found,
 * changed, finalized, deleted, counted nor swept.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_TENANT, type TenantScope } from '../db';
import { SessionsRepo, type NewSession } from './sessions.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };

let t: TestDb;
let repo: SessionsRepo;
let storage = 0;
let storage2 = 0;
let n = 0;
before(async () => {
  t = await openTestDb();
  repo = new SessionsRepo(t.db);
  storage = await testStorage(t.db);
  storage2 = await testStorage(t.db, 'Files', T2);
});
after(() => t?.close());

const NOW = new Date().toISOString();
const LATER = new Date(Date.now() + 3_600_000).toISOString();
const PAST = '2000-01-01T00:00:00.000Z';
const session = (o: Partial<NewSession> = {}): NewSession => ({
  id: `up_test_${++n}`,
  owner_id: 1,
  storage_id: storage,
  path: `f${n}.bin`,
  size: 10,
  chunk_size: 10,
  mime: null,
  mode: 'staged',
  handle: null,
  state: 'open',
  created_at: NOW,
  expires_at: LATER,
  ...o,
});
const times = <T>(k: number, f: (i: number) => Promise<T>) => Promise.all(Array.from({ length: k }, (_, i) => f(i)));

test('ten inits racing for the room left in a quota: only those that fit open', async () => {
  const owner = 7;
  await repo.open(T1, session({ owner_id: owner, size: 1000, expires_at: PAST }), null); // expired: no longer counted
  await times(10, () => repo.inFlight(T1, owner, NOW)); // PostgreSQL: every racer on a connection of its own
  const opened = await times(10, () => repo.open(T1, session({ owner_id: owner, size: 40 }), 100));
  assert.equal(opened.filter(Boolean).length, 2, JSON.stringify(opened));
  assert.equal(await repo.inFlight(T1, owner, NOW), 80);
  assert.equal(await repo.open(T1, session({ owner_id: owner, size: 20 }), 100), true, 'what is left still fits');
  assert.equal(await repo.open(T1, session({ owner_id: owner, size: 1 }), 100), false);
  assert.equal(await repo.open(T1, session({ owner_id: owner, size: 10_000 }), null), true, 'no quota: no limit');
});

test('ten finalizes of one session: one claims it; an abort then does not remove it', async () => {
  const s = session();
  await repo.open(T1, s, null);
  const claimed = await times(10, (i) => repo.claim(T1, s.id, `i${i}`, Date.now() + 60_000));
  assert.equal(claimed.filter(Boolean).length, 1);
  assert.equal(await repo.deleteOpen(T1, s.id), false);
  assert.equal(await repo.putPart(T1, s.id, { part: 1, size: 10, etag: 'e', sha256: null }), false, 'no part once a finalize holds it');
  assert.equal((await repo.get(T1, s.id))?.state, 'finalizing');
});

test('a part recorded while a finalize claims: the claim sees it, or it is refused', async () => {
  await times(4, () => repo.allIds([T1]));
  for (let round = 0; round < 10; round++) {
    const s = session();
    await repo.open(T1, s, null);
    await repo.putPart(T1, s.id, { part: 1, size: 10, etag: 'old', sha256: null });
    const [put, seen] = await Promise.all([
      repo.putPart(T1, s.id, { part: 2, size: 10, etag: 'new', sha256: null }),
      repo.claim(T1, s.id, 'A', Date.now() + 60_000).then(async (ok) => (ok ? (await repo.parts(T1, s.id)).map((p) => p.part) : null)),
    ]);
    if (put) assert.deepEqual(seen, [1, 2], `round ${round}: a part recorded after the claim read the parts`);
    else
      assert.deepEqual(
        (await repo.parts(T1, s.id)).map((p) => p.part),
        [1],
      );
  }
});

test('parts are replaced by a resend and dropped; an aborted session takes none', async () => {
  const s = session();
  await repo.open(T1, s, null);
  assert.equal(await repo.putPart(T1, s.id, { part: 1, size: 10, etag: 'a', sha256: null }), true);
  assert.equal(await repo.putPart(T1, s.id, { part: 1, size: 10, etag: 'b', sha256: 'ff' }), true);
  assert.deepEqual(await repo.parts(T1, s.id), [{ part: 1, size: 10, etag: 'b', sha256: 'ff' }]);
  await repo.dropPart(T1, s.id, 1);
  assert.deepEqual(await repo.parts(T1, s.id), []);
  assert.equal(await repo.deleteOpen(T1, s.id), true);
  assert.equal(await repo.putPart(T1, s.id, { part: 1, size: 10, etag: 'c', sha256: null }), false);
  assert.equal(await repo.get(T1, s.id), undefined);
});

test('two sweeps racing take each expired session once and leave a live finalize', async () => {
  const expired = [session({ expires_at: PAST }), session({ expires_at: PAST }), session({ expires_at: PAST })];
  for (const s of expired) await repo.open(T1, s, null);
  await repo.claim(T1, expired[2].id, 'A', Date.now() + 60_000);
  const swept = (await times(2, () => repo.deleteExpired(T1, NOW, Date.now()))).flat().map((s) => s.id);
  assert.deepEqual(swept.filter((id) => expired.some((s) => s.id === id)).sort(), [expired[0].id, expired[1].id].sort());
  assert.equal(new Set(swept).size, swept.length, 'no session swept twice');
  assert.ok((await repo.allIds([T1])).has(expired[2].id));
  await repo.markPublished(T1, expired[2].id, NOW, 10_000);
  assert.equal((await repo.get(T1, expired[2].id))?.published_at, NOW);
  await repo.release(T1, expired[2].id, 'A', 10_000);
  assert.equal(await repo.delete(T1, expired[2].id, 10_000), true);
  assert.equal((await repo.allIds([T1])).has(expired[2].id), false);
});

test('two tenants: another tenant’s session and parts are neither found, changed, finalized, deleted, counted nor swept', async () => {
  const owner = 42; // the same owner id in both: the tenant alone keeps them apart
  const mine = session({ owner_id: owner, size: 30 });
  const theirs = session({ owner_id: owner, storage_id: storage2, size: 50 });
  const theirsExpired = session({ owner_id: owner, storage_id: storage2, expires_at: PAST });
  await repo.open(T1, mine, null);
  await repo.open(T2, theirs, null);
  await repo.open(T2, theirsExpired, null);
  assert.equal(await repo.putPart(T2, theirs.id, { part: 1, size: 10, etag: 't', sha256: null }), true);
  const stored = await t.db.async.sql<{ tenant_id: number | string }>('SELECT tenant_id FROM upload_parts WHERE tenant_id = ? AND upload_id = ?', [
    2,
    theirs.id,
  ]);
  assert.deepEqual(
    stored.map((p) => Number(p.tenant_id)),
    [2],
    'a part carries its session’s tenant',
  );

  assert.equal(await repo.get(T1, theirs.id), undefined, 'not found by id');
  assert.deepEqual(await repo.parts(T1, theirs.id), [], 'its parts are not listed');
  assert.equal(await repo.putPart(T1, theirs.id, { part: 2, size: 10, etag: 'x', sha256: null }), false, 'no part is added to it');
  await repo.dropPart(T1, theirs.id, 1);
  assert.equal(await repo.inFlight(T1, owner, NOW), 30, 'its bytes are not counted against the owner id in another tenant');
  assert.equal(await repo.open(T1, session({ owner_id: owner, size: 70 }), 100), true, 'nor against the room of a quota');
  assert.equal(await repo.claim(T1, theirs.id, 'A', Date.now() + 60_000), false, 'not claimed');
  assert.equal(await repo.deleteOpen(T1, theirs.id), false, 'not aborted');
  assert.equal(await repo.delete(T1, theirs.id), false, 'not deleted');
  assert.deepEqual(
    (await repo.deleteExpired(T1, NOW, Date.now())).filter((s) => s.id === theirsExpired.id),
    [],
    'not swept',
  );
  assert.equal((await repo.allIds([T1])).has(theirs.id), false);
  assert.equal((await repo.allIds([T1, T2])).has(theirs.id), true, 'the staging sweep names every tenant');

  // A finalize of theirs in their tenant: the other tenant neither renews, takes over, publishes nor releases it.
  assert.equal(await repo.claim(T2, theirs.id, 'B', 1000), true);
  assert.equal(await repo.renew(T1, theirs.id, 'B', 2000), false);
  assert.ok(!(await repo.finalizing(T1, Infinity)).some((s) => s.id === theirs.id), 'recovery in another tenant does not see it');
  assert.equal(await repo.takeOver(T1, theirs.id, 'A', 5000, Infinity), false);
  await repo.markPublished(T1, theirs.id, NOW);
  await repo.release(T1, theirs.id, 'B');
  const kept = await repo.get(T2, theirs.id);
  assert.deepEqual([kept?.state, kept?.finalizing_by, kept?.finalize_until, kept?.published_at ?? null, kept?.tenant_id], ['finalizing', 'B', 1000, null, 2]);
  assert.deepEqual(
    (await repo.parts(T2, theirs.id)).map((p) => p.etag),
    ['t'],
  );
  assert.deepEqual(
    (await repo.finalizing(T2, Infinity)).map((s) => s.id),
    [theirs.id],
  );
  assert.deepEqual(
    (await repo.deleteExpired(T2, NOW, Date.now())).map((s) => s.id),
    [theirsExpired.id],
    'each tenant’s sweep takes its own',
  );
  assert.equal((await repo.get(T1, mine.id))?.tenant_id, 1);
});
