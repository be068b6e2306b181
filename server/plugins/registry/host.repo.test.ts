import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_TENANT } from '../../db';
import { AppHostRepo } from './host.repo';
import { openTestDb, testStorage, type TestDb } from '../../../test/helpers/test-database';

let t: TestDb;
let repo: AppHostRepo;
before(async () => {
  t = await openTestDb();
  repo = new AppHostRepo(t.db);
});
after(() => t?.close());

const T2 = { tenant_id: 2 };
/** Tenant 1's app `id` (single-tenant mode's every app). */
const ref = (id: string, s = DEFAULT_TENANT) => ({ tenant_id: s.tenant_id, id });

/** An installed app's row (the parent of every table here), in tenant 1 unless told. */
async function app(id: string, s = DEFAULT_TENANT) {
  const at = '2026-12-05T00:00:00.000Z';
  await t.db.async.run(
    t.db.k.insertInto('app_plugins').values({
      tenant_id: s.tenant_id,
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
  assert.equal(await repo.tokenOf(ref('sign'), sid, 'a.pdf'), null);
  await repo.putToken(ref('sign'), sid, 'a.pdf', 'tok1');
  await repo.putToken(ref('sign'), sid, 'a.pdf', 'tok2');
  await repo.putToken(ref('sign'), sid, 'b.pdf', 'tok3');
  assert.equal(await repo.tokenOf(ref('sign'), sid, 'a.pdf'), 'tok2', 'the second token replaced the first');
  assert.deepEqual((await repo.tokensOf(ref('sign'))).map((r) => r.rel).sort(), ['a.pdf', 'b.pdf']);
  await repo.dropToken(ref('sign'), sid, 'a.pdf');
  assert.deepEqual(
    (await repo.tokensOf(ref('sign'))).map((r) => r.rel),
    ['b.pdf'],
  );
});

test('of callers racing for a wake-up exactly one wins; the next is claimed only after the interval', async () => {
  await app('tick');
  const at = new Date('2026-12-05T10:00:00.000Z');
  const won = await Promise.all(Array.from({ length: 6 }, () => repo.claimWakeup(ref('tick'), 3_600_000, at)));
  assert.equal(won.filter(Boolean).length, 1, JSON.stringify(won));
  await repo.wakeupOutcome(ref('tick'), 'ok');
  assert.equal(await repo.claimWakeup(ref('tick'), 3_600_000, new Date(at.getTime() + 60_000)), false, 'within the interval');
  const later = new Date(at.getTime() + 3_600_000);
  const again = await Promise.all(Array.from({ length: 6 }, () => repo.claimWakeup(ref('tick'), 3_600_000, later)));
  assert.equal(again.filter(Boolean).length, 1, JSON.stringify(again));
});

test('a scheduled item is claimed once across racing callers, remembers its op and is pruned when old', async () => {
  await app('sched');
  const won = await Promise.all(Array.from({ length: 5 }, () => repo.claimScheduled(ref('sched'), 'k1', '2026-12-05T10:00:00.000Z')));
  assert.equal(won.filter(Boolean).length, 1, JSON.stringify(won));
  await repo.scheduledOp(ref('sched'), 'k1', '2026-12-05T10:00:00.000Z', 'op_1');
  const row = await t.db.async.first(t.db.k.selectFrom('app_plugin_schedule_runs').select('op_id').where('tenant_id', '=', 1).where('plugin', '=', 'sched'));
  assert.equal(row?.op_id, 'op_1');
  await repo.pruneScheduled([DEFAULT_TENANT], '2000-01-01T00:00:00.000Z');
  assert.equal(await repo.claimScheduled(ref('sched'), 'k1', '2026-12-05T10:00:00.000Z'), false, 'kept: not old enough');
  await repo.pruneScheduled([DEFAULT_TENANT], '2999-01-01T00:00:00.000Z');
  assert.equal(await repo.claimScheduled(ref('sched'), 'k1', '2026-12-05T10:00:00.000Z'), true, 'pruned: claimable again');
});

test("licence facts: the row, the keys of the store asked for and the revocation of the token's id, read together", async () => {
  await app('paid');
  const none = await repo.licenseFacts(ref('paid'), 'shop', () => 'L1');
  assert.deepEqual(none, { row: null, storeKeys: [], revoked: false });
  await repo.setLicense(ref('paid'), 'token-a', null);
  const k1 = await repo.addStoreKey('shop', 'PEM-1', null);
  await repo.addStoreKey('other', 'PEM-2', null);
  assert.ok(Number.isInteger(k1) && k1 > 0);
  let f = await repo.licenseFacts(ref('paid'), 'shop', (tok) => (tok === 'token-a' ? 'L1' : null));
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
  f = await repo.licenseFacts(ref('paid'), 'shop', () => 'L1');
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
  assert.equal(await repo.removeLicense(ref('paid')), true);
  assert.equal(await repo.removeLicense(ref('paid')), false);
});

test('a held status moves once: of checks racing to record the same change exactly one does (and audits it)', async () => {
  await app('held');
  await repo.setLicense(ref('held'), 'token-h', null);
  const held = await Promise.all(Array.from({ length: 4 }, () => repo.moveHeldStatus(ref('held'), null, 'expired')));
  assert.equal(held.filter(Boolean).length, 1, JSON.stringify(held));
  assert.equal((await repo.license(ref('held')))?.held_status, 'expired');
  const released = await Promise.all(Array.from({ length: 4 }, () => repo.moveHeldStatus(ref('held'), 'expired', null)));
  assert.equal(released.filter(Boolean).length, 1, JSON.stringify(released));
  assert.equal((await repo.license(ref('held')))?.held_status, null);
  await repo.setLicense(ref('held'), 'token-h2', null);
  assert.equal((await repo.license(ref('held')))?.token, 'token-h2');
});

test("tenants: the same app id in tenant 2 has its own tokens, wake-up, schedule and licence; neither reads, claims, changes nor prunes the other's", async () => {
  await app('both');
  await app('both', T2);
  const sid = await testStorage(t.db, 'TenantTokens');
  await repo.putToken(ref('both'), sid, 'a.pdf', 'one');
  await repo.putToken(ref('both', T2), sid, 'a.pdf', 'two');
  assert.equal(await repo.tokenOf(ref('both'), sid, 'a.pdf'), 'one');
  assert.equal(await repo.tokenOf(ref('both', T2), sid, 'a.pdf'), 'two', 'a token of tenant 2 replaces nothing of tenant 1');
  await repo.dropToken(ref('both', T2), sid, 'a.pdf');
  assert.deepEqual(await repo.tokensOf(ref('both', T2)), []);
  assert.equal(await repo.tokenOf(ref('both'), sid, 'a.pdf'), 'one', "tenant 2's drop left tenant 1's token");

  const at = new Date('2026-12-06T10:00:00.000Z');
  assert.equal(await repo.claimWakeup(ref('both'), 3_600_000, at), true);
  assert.equal(await repo.claimWakeup(ref('both', T2), 3_600_000, at), true, "tenant 1's wake-up is not tenant 2's");
  await repo.wakeupOutcome(ref('both', T2), 'two');
  const outcomes = await t.db.async.all(
    t.db.k.selectFrom('app_plugin_wakeups').select(['tenant_id', 'outcome']).where('tenant_id', 'in', [1, 2]).where('plugin', '=', 'both').orderBy('tenant_id'),
  );
  assert.deepEqual(
    outcomes.map((r) => [Number(r.tenant_id), r.outcome]),
    [
      [1, null],
      [2, 'two'],
    ],
  );

  const due = '2026-12-06T10:00:00.000Z';
  assert.equal(await repo.claimScheduled(ref('both'), 'k', due), true);
  assert.equal(await repo.claimScheduled(ref('both', T2), 'k', due), true, 'the same key and time run once per tenant');
  await repo.pruneScheduled([T2], '2999-01-01T00:00:00.000Z');
  assert.equal(await repo.claimScheduled(ref('both'), 'k', due), false, "pruning tenant 2's runs kept tenant 1's");
  assert.equal(await repo.claimScheduled(ref('both', T2), 'k', due), true);

  await repo.setLicense(ref('both'), 'token-1', null);
  assert.equal(await repo.license(ref('both', T2)), null, "tenant 1's licence is not tenant 2's");
  assert.equal((await repo.licenseFacts(ref('both', T2), null, () => null)).row, null);
  assert.equal(await repo.moveHeldStatus(ref('both', T2), null, 'expired'), false);
  assert.equal(await repo.removeLicense(ref('both', T2)), false);
  await repo.setLicense(ref('both', T2), 'token-2', null);
  assert.equal((await repo.license(ref('both')))?.token, 'token-1', "tenant 2's licence replaced nothing of tenant 1");
  assert.equal((await repo.license(ref('both', T2)))?.token, 'token-2');

  // Removing tenant 2's app takes its rows only (the cascade follows (tenant_id, id)).
  await t.db.async.run(t.db.k.deleteFrom('app_plugins').where('tenant_id', '=', 2).where('id', '=', 'both'));
  assert.equal(await repo.license(ref('both', T2)), null);
  assert.equal((await repo.license(ref('both')))?.token, 'token-1');
  assert.equal(await repo.tokenOf(ref('both'), sid, 'a.pdf'), 'one');
});
