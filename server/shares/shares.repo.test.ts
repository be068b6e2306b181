/**
 * The shares repository on this run's database (SQLite, or PostgreSQL under TEST_DATABASE=postgres): its
 * rows and their numbers, and the read-decide-write families raced by callers at once — download and
 * upload caps, the PIN lock, suspension and revocation once, a submission's file slots and names, and
 * closing a submission once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SharesRepo, type NewShare } from './shares.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: SharesRepo;
let storage = 0;
let n = 0;
before(async () => {
  t = await openTestDb();
  repo = new SharesRepo(t.db);
  storage = await testStorage(t.db);
});
after(() => t?.close());

const NOW = '2026-12-06T00:00:00.000Z';
const share = (over: Partial<NewShare> = {}): Promise<number> =>
  repo.insert({
    token: `tok${++n}`.padEnd(24, 'x'),
    kind: 'link',
    owner_id: 1,
    storage_id: storage,
    rel: `f${n}.txt`,
    is_dir: 0,
    ttl: null,
    expires_at: null,
    expiry_clamped: 0,
    max_downloads: null,
    max_uploads: null,
    pin_hash: null,
    comment: null,
    drop_settings: null,
    created_at: NOW,
    ...over,
  });
const times = <T>(k: number, f: () => Promise<T>) => Promise.all(Array.from({ length: k }, f));

test('rows: insert, by id and token, lists, app links with their total, numbers on both databases', async () => {
  const a = await share({ max_downloads: 3 });
  const app = await share({ kind: 'app', plugin_name: 'notes', page_id: 'p', title: 'T', app_files: '[]' });
  assert.equal(typeof a, 'number');
  const row = (await repo.byId(a))!;
  assert.equal(row.downloads, 0);
  assert.equal(row.is_dir, 0, 'flags as numbers');
  assert.equal((await repo.byToken(row.token))?.id, a);
  assert.equal((await repo.byId(app))?.kind, 'app', 'an app link reads as kind app');
  assert.deepEqual(
    (await repo.list(1)).slice(0, 2).map((s) => s.id),
    [app, a],
    'newest first',
  );
  const links = await repo.appLinks({ plugin: 'notes', active: true, nowIso: NOW, limit: 10, offset: 0 });
  assert.deepEqual([links.total, links.rows.map((r) => r.id)], [1, [app]]);
  assert.equal(typeof links.total, 'number');
  assert.equal(await repo.tombstoned('nope'), false);
});

test('twenty downloads racing for a cap of five: exactly five claim a slot; releases never go below zero', async () => {
  const id = await share({ max_downloads: 5 });
  const got = await times(20, () => repo.claimDownload(id, NOW));
  assert.equal(got.filter(Boolean).length, 5);
  assert.equal((await repo.byId(id))?.downloads, 5);
  await times(8, () => repo.releaseDownload(id));
  assert.equal((await repo.byId(id))?.downloads, 0);
  assert.equal(await repo.claimDownload(await share({ expires_at: '2026-01-01T00:00:00.000Z' }), NOW), false, 'an expired link claims nothing');
});

test('ten received files racing for a cap of three: exactly three claim a slot', async () => {
  const id = await share({ kind: 'drop', max_uploads: 3 });
  assert.equal((await times(10, () => repo.claimUpload(id))).filter(Boolean).length, 3);
  await times(5, () => repo.releaseUpload(id));
  assert.equal((await repo.byId(id))?.uploads, 0);
});

test('wrong PINs at once: each counts once, the fifth locks, the rest meet the lock; a right PIN does not lift it', async () => {
  const id = await share({ pin_hash: 'h' });
  const until = '2026-12-06T00:10:00.000Z';
  const after = await times(8, () => repo.pinFailed(id, 5, until, NOW));
  const counted = after
    .filter((r) => r.locked_until === null)
    .map((r) => r.pin_fails)
    .sort();
  assert.deepEqual(counted, [1, 2, 3, 4], 'four distinct counts before the lock');
  assert.ok(after.filter((r) => r.locked_until === until).length === 4, 'the locking answer and the three after it see the lock');
  await repo.pinPassed(id, NOW);
  assert.equal((await repo.byId(id))?.locked_until, until, 'a right PIN checked against a stale row leaves the lock');
  await repo.pinPassed(id, '2026-12-06T00:11:00.000Z');
  assert.equal((await repo.byId(id))?.locked_until, null, 'past the lock it restarts the gate');
});

test('suspend, resume, revoke and sweep: each decided once however many callers race', async () => {
  const id = await share();
  assert.equal((await times(5, () => repo.suspend(id, 'addresses', NOW))).filter(Boolean).length, 1);
  assert.equal((await repo.suspendedCount()) >= 1, true);
  assert.equal(typeof (await repo.suspendedCount()), 'number');
  assert.equal((await times(5, () => repo.resume(id))).filter(Boolean).length, 1);
  assert.equal((await times(5, () => repo.revoke(id, NOW))).filter(Boolean).length, 1);
  const [a, b] = await Promise.all([repo.sweep('2026-12-07T00:00:00.000Z'), repo.sweep('2026-12-07T00:00:00.000Z')]);
  assert.ok([...a, ...b].filter((x) => x === id).length === 1, 'the revoked link is swept once');
  assert.equal(await repo.byId(id), undefined);
});

test('a submission: files racing for its last slots and for one name; closed once; counted as a use', async () => {
  const drop = await share({ kind: 'drop' });
  const sub = `sub_${n}`;
  await repo.insertSubmission({ id: sub, share_id: drop, folder: 'in', uploader: null, ip: null, has_note: 0, created_at: NOW });
  const file = (name: string, i: number) => ({ upload_id: `up_${n}_${i}`, name, size: 10 });
  // Six files with distinct names for three slots.
  const slots = await Promise.all(Array.from({ length: 6 }, (_, i) => repo.addSubmissionFile(sub, 3, file(`f${i}.txt`, i))));
  assert.deepEqual([slots.filter((s) => s === 'added').length, slots.filter((s) => s === 'full').length], [3, 3]);
  // Four files named alike (case aside) for plenty of slots: one gets the name, and no slot is spent by the others.
  const named = await Promise.all(['a.txt', 'A.txt', 'a.TXT', 'a.txt'].map((name, i) => repo.addSubmissionFile(sub, 100, file(name, 10 + i))));
  assert.deepEqual([named.filter((s) => s === 'added').length, named.filter((s) => s === 'taken').length], [1, 3]);
  const files = await repo.submissionFiles(sub);
  assert.equal(files.length, 4);
  assert.equal((await repo.submission(sub))?.files, 4, 'a refused name gives its slot back');
  assert.deepEqual(
    files.map((f) => f.position),
    [1, 2, 3, 4],
    'positions follow the slots',
  );
  assert.ok((await repo.namesIn(sub)).has('a.txt'));
  await repo.markFileDone(files[0].upload_id);
  assert.equal((await repo.dropFile(files[0].upload_id))?.done, 1);
  assert.equal((await repo.submissionCounts(1)).get(drop), 1);
  assert.deepEqual((await repo.staleSubmissions('2026-12-07T00:00:00.000Z')).map((s) => s.id).includes(sub), true);
  assert.equal((await times(4, () => repo.finishSubmission(sub, NOW))).filter(Boolean).length, 1);
  assert.equal(await repo.addSubmissionFile(sub, 100, file('late.txt', 99)), 'full', 'a finished submission takes no file');
});
