/**
 * The upload sessions repository on SQLite and (TEST_DATABASE=postgres) PostgreSQL, its read-decide-write
 * families raced by callers at once: sessions opened for the last room of a quota, a finalize claimed, a part
 * recorded while a finalize claims, two sweeps of the same expired sessions. (The lease between two
 * instances: sessions.lease.test.ts.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionsRepo, type SessionRow } from './sessions.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: SessionsRepo;
let storage = 0;
let n = 0;
before(async () => {
  t = await openTestDb();
  repo = new SessionsRepo(t.db);
  storage = await testStorage(t.db);
});
after(() => t?.close());

const NOW = new Date().toISOString();
const LATER = new Date(Date.now() + 3_600_000).toISOString();
const PAST = '2000-01-01T00:00:00.000Z';
const session = (o: Partial<SessionRow> = {}): SessionRow => ({
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
  await repo.open(session({ owner_id: owner, size: 1000, expires_at: PAST }), null); // expired: no longer counted
  await times(10, () => repo.inFlight(owner, NOW)); // PostgreSQL: every racer on a connection of its own
  const opened = await times(10, () => repo.open(session({ owner_id: owner, size: 40 }), 100));
  assert.equal(opened.filter(Boolean).length, 2, JSON.stringify(opened));
  assert.equal(await repo.inFlight(owner, NOW), 80);
  assert.equal(await repo.open(session({ owner_id: owner, size: 20 }), 100), true, 'what is left still fits');
  assert.equal(await repo.open(session({ owner_id: owner, size: 1 }), 100), false);
  assert.equal(await repo.open(session({ owner_id: owner, size: 10_000 }), null), true, 'no quota: no limit');
});

test('ten finalizes of one session: one claims it; an abort then does not remove it', async () => {
  const s = session();
  await repo.open(s, null);
  const claimed = await times(10, (i) => repo.claim(s.id, `i${i}`, Date.now() + 60_000));
  assert.equal(claimed.filter(Boolean).length, 1);
  assert.equal(await repo.deleteOpen(s.id), false);
  assert.equal(await repo.putPart(s.id, { part: 1, size: 10, etag: 'e', sha256: null }), false, 'no part once a finalize holds it');
  assert.equal((await repo.get(s.id))?.state, 'finalizing');
});

test('a part recorded while a finalize claims: the claim sees it, or it is refused', async () => {
  await times(4, () => repo.allIds());
  for (let round = 0; round < 10; round++) {
    const s = session();
    await repo.open(s, null);
    await repo.putPart(s.id, { part: 1, size: 10, etag: 'old', sha256: null });
    const [put, seen] = await Promise.all([
      repo.putPart(s.id, { part: 2, size: 10, etag: 'new', sha256: null }),
      repo.claim(s.id, 'A', Date.now() + 60_000).then(async (ok) => (ok ? (await repo.parts(s.id)).map((p) => p.part) : null)),
    ]);
    if (put) assert.deepEqual(seen, [1, 2], `round ${round}: a part recorded after the claim read the parts`);
    else
      assert.deepEqual(
        (await repo.parts(s.id)).map((p) => p.part),
        [1],
      );
  }
});

test('parts are replaced by a resend and dropped; an aborted session takes none', async () => {
  const s = session();
  await repo.open(s, null);
  assert.equal(await repo.putPart(s.id, { part: 1, size: 10, etag: 'a', sha256: null }), true);
  assert.equal(await repo.putPart(s.id, { part: 1, size: 10, etag: 'b', sha256: 'ff' }), true);
  assert.deepEqual(await repo.parts(s.id), [{ part: 1, size: 10, etag: 'b', sha256: 'ff' }]);
  await repo.dropPart(s.id, 1);
  assert.deepEqual(await repo.parts(s.id), []);
  assert.equal(await repo.deleteOpen(s.id), true);
  assert.equal(await repo.putPart(s.id, { part: 1, size: 10, etag: 'c', sha256: null }), false);
  assert.equal(await repo.get(s.id), undefined);
});

test('two sweeps racing take each expired session once and leave a live finalize', async () => {
  const expired = [session({ expires_at: PAST }), session({ expires_at: PAST }), session({ expires_at: PAST })];
  for (const s of expired) await repo.open(s, null);
  await repo.claim(expired[2].id, 'A', Date.now() + 60_000);
  const swept = (await times(2, () => repo.deleteExpired(NOW, Date.now()))).flat().map((s) => s.id);
  assert.deepEqual(swept.filter((id) => expired.some((s) => s.id === id)).sort(), [expired[0].id, expired[1].id].sort());
  assert.equal(new Set(swept).size, swept.length, 'no session swept twice');
  assert.ok((await repo.allIds()).has(expired[2].id));
  await repo.markPublished(expired[2].id, NOW, 10_000);
  assert.equal((await repo.get(expired[2].id))?.published_at, NOW);
  await repo.release(expired[2].id, 'A', 10_000);
  assert.equal(await repo.delete(expired[2].id, 10_000), true);
  assert.equal((await repo.allIds()).has(expired[2].id), false);
});
