/**
 * The shares repository on this run's database (SQLite, or PostgreSQL under TEST_DATABASE=postgres): its
 * rows and their numbers, and the read-decide-write families raced by callers at once — download and
 * upload caps, the PIN lock, suspension and revocation once, a submission's file slots and names, and
 * closing a submission once.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SharesRepo, type NewShare } from './shares.repo';
import { LinkLoadRepo } from './link-load.repo';
import { DEFAULT_TENANT, type TenantScope } from '../db';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };

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
const fields = (over: Partial<NewShare> = {}): NewShare => ({
  token: `tok${++n}`.padEnd(24, 'x'),
  kind: 'link',
  owner_id: 1,
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
  storage_id: storage,
  created_at: NOW,
  ...over,
});
const share = async (over: Partial<NewShare> = {}, scope: TenantScope = T1, storageId = storage): Promise<number> =>
  (await repo.insert(scope, fields({ storage_id: storageId, ...over })))!;
const times = <T>(k: number, f: () => Promise<T>) => Promise.all(Array.from({ length: k }, f));

test('rows: insert, by id and token, lists, app links with their total, numbers on both databases', async () => {
  const a = await share({ max_downloads: 3 });
  const app = await share({ kind: 'app', plugin_name: 'notes', page_id: 'p', title: 'T', app_files: '[]' });
  assert.equal(typeof a, 'number');
  const row = (await repo.byId(T1, a))!;
  assert.equal(row.downloads, 0);
  assert.equal(row.is_dir, 0, 'flags as numbers');
  assert.equal((await repo.byToken(T1, row.token))?.id, a);
  assert.equal((await repo.byId(T1, app))?.kind, 'app', 'an app link reads as kind app');
  assert.deepEqual(
    (await repo.list(T1, 1)).slice(0, 2).map((s) => s.id),
    [app, a],
    'newest first',
  );
  const links = await repo.appLinks(T1, { plugin: 'notes', active: true, nowIso: NOW, limit: 10, offset: 0 });
  assert.deepEqual([links.total, links.rows.map((r) => r.id)], [1, [app]]);
  assert.equal(typeof links.total, 'number');
  assert.equal(await repo.tombstoned(T1, 'nope'), false);
});

test('twenty downloads racing for a cap of five: exactly five claim a slot; releases never go below zero', async () => {
  const id = await share({ max_downloads: 5 });
  const got = await times(20, () => repo.claimDownload(T1, id, NOW));
  assert.equal(got.filter(Boolean).length, 5);
  assert.equal((await repo.byId(T1, id))?.downloads, 5);
  await times(8, () => repo.releaseDownload(T1, id));
  assert.equal((await repo.byId(T1, id))?.downloads, 0);
  assert.equal(await repo.claimDownload(T1, await share({ expires_at: '2026-01-01T00:00:00.000Z' }), NOW), false, 'an expired link claims nothing');
});

test('ten received files racing for a cap of three: exactly three claim a slot', async () => {
  const id = await share({ kind: 'drop', max_uploads: 3 });
  assert.equal((await times(10, () => repo.claimUpload(T1, id))).filter(Boolean).length, 3);
  await times(5, () => repo.releaseUpload(T1, id));
  assert.equal((await repo.byId(T1, id))?.uploads, 0);
});

test('wrong PINs at once: each counts once, the fifth locks, the rest meet the lock; a right PIN does not lift it', async () => {
  const id = await share({ pin_hash: 'h' });
  const until = '2026-12-06T00:10:00.000Z';
  const after = await times(8, () => repo.pinFailed(T1, id, 5, until, NOW));
  const counted = after
    .filter((r) => r.locked_until === null)
    .map((r) => r.pin_fails)
    .sort();
  assert.deepEqual(counted, [1, 2, 3, 4], 'four distinct counts before the lock');
  assert.ok(after.filter((r) => r.locked_until === until).length === 4, 'the locking answer and the three after it see the lock');
  await repo.pinPassed(T1, id, NOW);
  assert.equal((await repo.byId(T1, id))?.locked_until, until, 'a right PIN checked against a stale row leaves the lock');
  await repo.pinPassed(T1, id, '2026-12-06T00:11:00.000Z');
  assert.equal((await repo.byId(T1, id))?.locked_until, null, 'past the lock it restarts the gate');
});

test('suspend, resume, revoke and sweep: each decided once however many callers race', async () => {
  const id = await share();
  assert.equal((await times(5, () => repo.suspend(T1, id, 'addresses', NOW))).filter(Boolean).length, 1);
  assert.equal((await repo.suspendedCount(T1)) >= 1, true);
  assert.equal(typeof (await repo.suspendedCount(T1)), 'number');
  assert.equal((await times(5, () => repo.resume(T1, id))).filter(Boolean).length, 1);
  assert.equal((await times(5, () => repo.revoke(T1, id, NOW))).filter(Boolean).length, 1);
  const [a, b] = await Promise.all([repo.sweep(T1, '2026-12-07T00:00:00.000Z'), repo.sweep(T1, '2026-12-07T00:00:00.000Z')]);
  assert.ok([...a, ...b].filter((x) => x === id).length === 1, 'the revoked link is swept once');
  assert.equal(await repo.byId(T1, id), undefined);
});

test('a submission: files racing for its last slots and for one name; closed once; counted as a use', async () => {
  const drop = await share({ kind: 'drop' });
  const sub = `sub_${n}`;
  await repo.insertSubmission(T1, { id: sub, share_id: drop, folder: 'in', uploader: null, ip: null, has_note: 0, created_at: NOW });
  const file = (name: string, i: number) => ({ upload_id: `up_${n}_${i}`, name, size: 10 });
  // Six files with distinct names for three slots.
  const slots = await Promise.all(Array.from({ length: 6 }, (_, i) => repo.addSubmissionFile(T1, sub, 3, file(`f${i}.txt`, i))));
  assert.deepEqual([slots.filter((s) => s === 'added').length, slots.filter((s) => s === 'full').length], [3, 3]);
  // Four files named alike (case aside) for plenty of slots: one gets the name, and no slot is spent by the others.
  const named = await Promise.all(['a.txt', 'A.txt', 'a.TXT', 'a.txt'].map((name, i) => repo.addSubmissionFile(T1, sub, 100, file(name, 10 + i))));
  assert.deepEqual([named.filter((s) => s === 'added').length, named.filter((s) => s === 'taken').length], [1, 3]);
  const files = await repo.submissionFiles(T1, sub);
  assert.equal(files.length, 4);
  assert.equal((await repo.submission(T1, sub))?.files, 4, 'a refused name gives its slot back');
  assert.deepEqual(
    files.map((f) => f.position),
    [1, 2, 3, 4],
    'positions follow the slots',
  );
  assert.ok((await repo.namesIn(T1, sub)).has('a.txt'));
  await repo.markFileDone(T1, files[0].upload_id);
  assert.equal((await repo.dropFile(T1, files[0].upload_id))?.done, 1);
  assert.equal((await repo.submissionCounts(T1, 1)).get(drop), 1);
  assert.deepEqual((await repo.staleSubmissions(T1, '2026-12-07T00:00:00.000Z')).map((s) => s.id).includes(sub), true);
  assert.equal((await times(4, () => repo.finishSubmission(T1, sub, NOW))).filter(Boolean).length, 1);
  assert.equal(await repo.addSubmissionFile(T1, sub, 100, file('late.txt', 99)), 'full', 'a finished submission takes no file');
});

test('two tenants: the same owner id, storage name and token shape in each; another tenant’s share, submission, files, visitors and strikes are neither listed, found, changed, counted nor swept', async () => {
  const storage2 = await testStorage(t.db, 'Files', T2);
  assert.equal(await repo.insert(T1, fields({ storage_id: storage2 })), undefined, 'a share is not made on another tenant’s storage');
  assert.equal(await repo.insert(T2, fields()), undefined);
  const mine = await share({ kind: 'drop', max_uploads: 5 });
  const theirs = await share({ kind: 'drop', max_uploads: 5, pin_hash: 'h' }, T2, storage2);
  const row = async () => (await repo.byId(T2, theirs))!;
  const their = await row();
  assert.equal(their.tenant_id, 2, 'written in its owner’s tenant');
  assert.match(their.token, /^tok\d+x+$/);

  // Neither found by id or token nor listed.
  assert.equal(await repo.byId(T1, theirs), undefined);
  assert.equal(await repo.byToken(T1, their.token), undefined);
  assert.equal((await repo.byToken(T2, their.token))?.id, theirs);
  assert.ok(!(await repo.list(T1, 1)).some((r) => r.id === theirs));
  assert.ok(!(await repo.list(T1, null)).some((r) => r.id === theirs));
  assert.deepEqual(
    (await repo.list(T2, 1)).map((r) => r.id),
    [theirs],
  );
  assert.ok((await repo.list(T1, 1)).some((r) => r.id === mine));
  const app = await share({ kind: 'app', plugin_name: 'notes', page_id: 'p', title: 'T', app_files: '[]' }, T2, storage2);
  const folder = await share({ is_dir: 1 }, T2, storage2);
  assert.ok(!(await repo.appLinks(T1, { plugin: 'notes', nowIso: NOW, limit: 100, offset: 0 })).rows.some((r) => r.id === app));
  assert.deepEqual((await repo.appLinks(T2, { plugin: 'notes', nowIso: NOW, limit: 100, offset: 0 })).total, 1);
  assert.ok(!(await repo.activeFolderLinks(T1, NOW)).some((r) => r.id === folder));
  assert.deepEqual(
    (await repo.activeFolderLinks(T2, NOW)).map((r) => r.id),
    [folder],
  );
  assert.equal((await repo.byIdAmong([T1], theirs))?.id, undefined, 'a system lookup among tenant 1 only does not reach it');
  assert.equal((await repo.byIdAmong([T1, T2], theirs))?.id, theirs);

  // Not changed through tenant 1.
  assert.equal(await repo.claimDownload(T1, theirs, NOW), false);
  assert.equal(await repo.claimUpload(T1, theirs), false);
  assert.equal(await repo.suspend(T1, theirs, 'addresses', NOW), false);
  assert.equal(await repo.revoke(T1, theirs, NOW), false);
  assert.equal(await repo.pinFailed(T1, theirs, 1, '2026-12-06T01:00:00.000Z', NOW), undefined);
  const after = await row();
  assert.deepEqual([after.downloads, after.uploads, after.suspended_at, after.revoked_at, after.pin_fails, after.locked_until], [0, 0, null, null, 0, null]);
  await repo.claimUpload(T2, theirs);
  await repo.releaseUpload(T1, theirs);
  assert.equal((await row()).uploads, 1, 'a release through another tenant gives nothing back');

  // Counted in its own tenant only.
  const suspendedMine = await repo.suspendedCount(T1);
  assert.equal(await repo.suspend(T2, theirs, 'addresses', NOW), true);
  assert.equal(await repo.suspendedCount(T1), suspendedMine);
  assert.equal(await repo.suspendedCount(T2), 1);
  assert.equal(await repo.resume(T1, theirs), false);
  assert.equal(await repo.resume(T2, theirs), true);

  // Its submission and files carry its tenant.
  await repo.insertSubmission(their, { id: 'sub_t2', share_id: theirs, folder: 'in', uploader: null, ip: null, has_note: 0, created_at: NOW });
  assert.equal(await repo.submission(T1, 'sub_t2'), undefined);
  assert.equal(await repo.addSubmissionFile(T1, 'sub_t2', 10, { upload_id: 'up_t1', name: 'a.txt', size: 1 }), 'full');
  assert.equal(await repo.addSubmissionFile(T2, 'sub_t2', 10, { upload_id: 'up_t2', name: 'a.txt', size: 1 }), 'added');
  assert.equal((await repo.submission(T2, 'sub_t2'))?.files, 1, 'the refused file took no slot');
  assert.equal(await repo.dropFile(T1, 'up_t2'), undefined);
  assert.deepEqual(await repo.submissionFiles(T1, 'sub_t2'), []);
  assert.equal((await repo.namesIn(T1, 'sub_t2')).size, 0);
  await repo.markFileDone(T1, 'up_t2');
  assert.equal((await repo.dropFile(T2, 'up_t2'))?.done, 0);
  await repo.markFileDone(T2, 'up_t2');
  assert.equal((await repo.submissionCounts(T1, 1)).get(theirs), undefined);
  assert.equal((await repo.submissionCounts(T2, 1)).get(theirs), 1);
  assert.ok(!(await repo.staleSubmissions(T1, '2026-12-07T00:00:00.000Z')).some((s) => s.id === 'sub_t2'));
  assert.equal(await repo.finishSubmission(T1, 'sub_t2', NOW), false);
  assert.equal((await repo.submission(T2, 'sub_t2'))?.finished_at, null);

  // Its visitors, strikes and stream slots are neither counted, renewed, forgotten nor pruned by tenant 1.
  const load = new LinkLoadRepo(t.db);
  const ms = 5_000_000;
  assert.equal(await load.see(T2, theirs, '192.0.2.1', ms, 0), 1);
  assert.equal(await load.strike(T2, theirs, '192.0.2.1', ms, 0), 1);
  const slot = await load.take(T2, theirs, 1, 'H', ms + 1000, ms, '192.0.2.1');
  assert.deepEqual(slot, { tenant_id: 2, shareId: theirs, slot: 1 });
  assert.equal(await load.holds(T1, theirs, '192.0.2.1', ms), false);
  assert.equal(await load.see(T1, mine, '192.0.2.1', ms, 0), 1, 'a visitor of another tenant’s link is not counted here');
  await load.renew([T1], 'H', ms + 9000);
  await load.forget(T1, theirs);
  await load.prune(T1, ms + 5000, ms + 5000, ms + 5000);
  assert.equal(await load.see(T2, theirs, '192.0.2.2', ms, 0), 2, 'its addresses were neither forgotten nor pruned');
  assert.equal(await load.strike(T2, theirs, '192.0.2.1', ms + 1, 0), 2, 'nor its strikes');
  const streams = () => t.db.async.sql<{ until: number }>('SELECT until FROM link_streams WHERE tenant_id = 2 AND share_id = ?', [theirs]);
  assert.deepEqual(
    (await streams()).map((r) => Number(r.until)),
    [ms + 1000],
    'its slot was neither renewed nor pruned',
  );
  await load.renew([T2], 'H', ms + 9000);
  assert.deepEqual(
    (await streams()).map((r) => Number(r.until)),
    [ms + 9000],
  );
  await load.prune(T2, ms + 10_000, ms + 10_000, ms + 10_000);
  assert.deepEqual(await streams(), []);
  assert.equal(await load.see(T2, theirs, '192.0.2.3', ms + 10_001, ms + 10_000), 1, 'pruned in its own tenant');

  // Swept in its own tenant only; a deleted storage's tombstone is its tenant's.
  await repo.revoke(T2, theirs, '2026-12-01T00:00:00.000Z');
  assert.ok(!(await repo.sweep(T1, '2026-12-07T00:00:00.000Z')).includes(theirs));
  assert.equal((await row())?.id, theirs);
  assert.deepEqual(await repo.sweep(T2, '2026-12-07T00:00:00.000Z'), [theirs]);
  const folderToken = (await repo.byId(T2, folder))!.token;
  await t.db.async.sql('DELETE FROM storages WHERE tenant_id = 2 AND id = ?', [storage2]);
  assert.equal(await repo.byIdAmong([T1, T2], app), undefined, 'the storage’s links went with it');
  assert.equal(await repo.tombstoned(T2, folderToken, 'link'), true);
  assert.equal(await repo.tombstoned(T1, folderToken), false, 'another tenant’s tombstone is unknown');
  await repo.sweep(T1, '2099-01-01T00:00:00.000Z');
  assert.equal(await repo.tombstoned(T2, folderToken), true, 'not swept by tenant 1');
  await repo.sweep(T2, '2099-01-01T00:00:00.000Z');
  assert.equal(await repo.tombstoned(T2, folderToken), false);
});
