import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppHostRepo } from './host.repo';
import { openTestDb, testStorage, type TestDb } from '../../../test/helpers/test-database';

let t: TestDb;
let repo: AppHostRepo;
before(async () => {
  t = await openTestDb();
  repo = new AppHostRepo(t.db);
});
after(() => t?.close());

/** An installed app's row (the parent of every table here). */
async function app(id: string) {
  const at = '2026-12-05T00:00:00.000Z';
  await t.db.async.run(
    t.db.k.insertInto('app_plugins').values({
      id,
      version: '1.0.0',
      publisher: 'acme',
      digest: 'd',
      manifest: '{}',
      code: '',
      languages: '{}',
      icons: '{}',
      enabled: 1,
      settings: '{}',
      approved_hosts: '[]',
      installed_by: null,
      installed_at: at,
      updated_at: at,
    }),
  );
}

test('lock tokens are kept per app and place, replaced, listed and dropped', async () => {
  await app('sign');
  const sid = await testStorage(t.db, 'Tokens');
  assert.equal(await repo.tokenOf('sign', sid, 'a.pdf'), null);
  await repo.putToken('sign', sid, 'a.pdf', 'tok1');
  await repo.putToken('sign', sid, 'a.pdf', 'tok2');
  await repo.putToken('sign', sid, 'b.pdf', 'tok3');
  assert.equal(await repo.tokenOf('sign', sid, 'a.pdf'), 'tok2', 'the second token replaced the first');
  assert.deepEqual((await repo.tokensOf('sign')).map((r) => r.rel).sort(), ['a.pdf', 'b.pdf']);
  await repo.dropToken('sign', sid, 'a.pdf');
  assert.deepEqual(
    (await repo.tokensOf('sign')).map((r) => r.rel),
    ['b.pdf'],
  );
});

test('of callers racing for a wake-up exactly one wins; the next is claimed only after the interval', async () => {
  await app('tick');
  const at = new Date('2026-12-05T10:00:00.000Z');
  const won = await Promise.all(Array.from({ length: 6 }, () => repo.claimWakeup('tick', 3_600_000, at)));
  assert.equal(won.filter(Boolean).length, 1, JSON.stringify(won));
  await repo.wakeupOutcome('tick', 'ok');
  assert.equal(await repo.claimWakeup('tick', 3_600_000, new Date(at.getTime() + 60_000)), false, 'within the interval');
  const later = new Date(at.getTime() + 3_600_000);
  const again = await Promise.all(Array.from({ length: 6 }, () => repo.claimWakeup('tick', 3_600_000, later)));
  assert.equal(again.filter(Boolean).length, 1, JSON.stringify(again));
});

test('a scheduled item is claimed once across racing callers, remembers its op and is pruned when old', async () => {
  await app('sched');
  const won = await Promise.all(Array.from({ length: 5 }, () => repo.claimScheduled('sched', 'k1', '2026-12-05T10:00:00.000Z')));
  assert.equal(won.filter(Boolean).length, 1, JSON.stringify(won));
  await repo.scheduledOp('sched', 'k1', '2026-12-05T10:00:00.000Z', 'op_1');
  const row = await t.db.async.first(t.db.k.selectFrom('app_plugin_schedule_runs').select('op_id').where('plugin', '=', 'sched'));
  assert.equal(row?.op_id, 'op_1');
  await repo.pruneScheduled('2000-01-01T00:00:00.000Z');
  assert.equal(await repo.claimScheduled('sched', 'k1', '2026-12-05T10:00:00.000Z'), false, 'kept: not old enough');
  await repo.pruneScheduled('2999-01-01T00:00:00.000Z');
  assert.equal(await repo.claimScheduled('sched', 'k1', '2026-12-05T10:00:00.000Z'), true, 'pruned: claimable again');
});

test("licence facts: the row, the keys of the store asked for and the revocation of the token's id, read together", async () => {
  await app('paid');
  const none = await repo.licenseFacts('paid', 'shop', () => 'L1');
  assert.deepEqual(none, { row: null, storeKeys: [], revoked: false });
  await repo.setLicense('paid', 'token-a', null);
  const k1 = await repo.addStoreKey('shop', 'PEM-1', null);
  await repo.addStoreKey('other', 'PEM-2', null);
  assert.ok(Number.isInteger(k1) && k1 > 0);
  let f = await repo.licenseFacts('paid', 'shop', (tok) => (tok === 'token-a' ? 'L1' : null));
  assert.equal(f.row?.token, 'token-a');
  assert.equal(f.row?.held_status, null);
  assert.deepEqual(f.storeKeys, ['PEM-1']);
  assert.equal(f.revoked, false);
  await repo.revoke('L1', 'refunded', null);
  await repo.revoke('L1', 'twice', null);
  assert.deepEqual(
    (await repo.revocations()).map((r) => [r.license_id, r.note]),
    [['L1', 'refunded']],
  );
  f = await repo.licenseFacts('paid', 'shop', () => 'L1');
  assert.equal(f.revoked, true);
  assert.equal(await repo.unrevoke('L1'), true);
  assert.equal(await repo.unrevoke('L1'), false);
  assert.deepEqual(
    (await repo.storeKeys('other')).map((k) => k.public_key_pem),
    ['PEM-2'],
  );
  assert.equal((await repo.storeKeys()).length, 2);
  assert.equal(await repo.removeStoreKey(k1), true);
  assert.equal(await repo.removeStoreKey(k1), false);
  assert.equal(await repo.removeLicense('paid'), true);
  assert.equal(await repo.removeLicense('paid'), false);
});

test('a held status moves once: of checks racing to record the same change exactly one does (and audits it)', async () => {
  await app('held');
  await repo.setLicense('held', 'token-h', null);
  const held = await Promise.all(Array.from({ length: 4 }, () => repo.moveHeldStatus('held', null, 'expired')));
  assert.equal(held.filter(Boolean).length, 1, JSON.stringify(held));
  assert.equal((await repo.license('held'))?.held_status, 'expired');
  const released = await Promise.all(Array.from({ length: 4 }, () => repo.moveHeldStatus('held', 'expired', null)));
  assert.equal(released.filter(Boolean).length, 1, JSON.stringify(released));
  assert.equal((await repo.license('held'))?.held_status, null);
  await repo.setLicense('held', 'token-h2', null);
  assert.equal((await repo.license('held'))?.token, 'token-h2');
});
