/**
 * The finalize lease of chunked uploads (docs/operations.md, "Several
 * instances"), two repositories on one database as two instances have them:
 * a claimed finalize belongs to its instance while it renews its lease; the
 * other instance's recovery, sweep and abort leave it alone; once the lease
 * passed exactly one instance takes it over, and the first can no longer
 * renew or release it. On SQLite (one file, two connections) and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { DEFAULT_TENANT as T, type Db } from '../db';
import { SessionsRepo } from './sessions.repo';
import { onTwoConnections } from '../../test/helpers/two-connections';

const PAST = '2000-01-01T00:00:00.000Z';

async function scenario(a: Db, b: Db) {
  const [ra, rb] = [new SessionsRepo(a), new SessionsRepo(b)];
  const at = new Date().toISOString();
  await a.async.run(
    a.k.insertInto('storages').values({ tenant_id: 1, uid: 'st-lease', name: 'Lease', driver: 'local', created_at: at, updated_at: at } as never),
  );
  const storage = (await a.async.first(a.k.selectFrom('storages').select('id').where('tenant_id', '=', 1).where('uid', '=', 'st-lease')))!.id;
  const row = {
    owner_id: 1,
    storage_id: storage,
    path: 'f.bin',
    size: 10,
    chunk_size: 10,
    mime: null,
    mode: 'staged' as const,
    handle: null,
    state: 'open' as const,
    created_at: at,
    expires_at: PAST,
  };
  await ra.open(T, { ...row, id: 'up_lease_one' }, null);
  await ra.open(T, { ...row, id: 'up_lease_two' }, null);
  const t0 = 1_000_000;
  const ids = (rows: Array<{ id: string }>) => rows.map((s) => s.id);

  assert.equal(await ra.claim(T, 'up_lease_one', 'A', t0 + 1000), true);
  assert.equal(await rb.claim(T, 'up_lease_one', 'B', t0 + 1000), false, 'one finalize at a time');
  assert.deepEqual(ids(await rb.finalizing(T, t0 + 500)), [], 'a live lease is not recovery’s');
  assert.equal(await rb.takeOver(T, 'up_lease_one', 'B', t0 + 1500, t0 + 500), false);
  assert.equal(await rb.deleteOpen(T, 'up_lease_one'), false, 'an abort does not remove a session being finalized');
  assert.equal(await ra.renew(T, 'up_lease_one', 'A', t0 + 2000), true);
  assert.deepEqual(ids(await rb.finalizing(T, t0 + 1500)), [], 'renewed past 1500');
  assert.deepEqual(ids(await rb.finalizing(T, Infinity)), ['up_lease_one'], 'at start on SQLite every finalizing session is a crash’s');

  // A dies: its lease passes.
  assert.deepEqual(ids(await rb.finalizing(T, t0 + 2500)), ['up_lease_one']);
  assert.equal(await rb.takeOver(T, 'up_lease_one', 'B', t0 + 3500, t0 + 2500), true);
  assert.equal(await ra.takeOver(T, 'up_lease_one', 'A', t0 + 3500, t0 + 2500), false, 'taken over once');
  assert.equal(await ra.renew(T, 'up_lease_one', 'A', t0 + 4000), false, 'the old owner lost it');
  await ra.release(T, 'up_lease_one', 'A');
  assert.equal((await rb.get(T, 'up_lease_one'))?.state, 'finalizing', 'the old owner cannot reopen it');
  assert.equal((await rb.get(T, 'up_lease_one'))?.finalizing_by, 'B');
  // The sweep skips a live finalize even past its expiry.
  assert.deepEqual(ids(await rb.deleteExpired(T, new Date().toISOString(), t0 + 3000)), ['up_lease_two']);
  await rb.release(T, 'up_lease_one', 'B');
  const reopened = (await ra.get(T, 'up_lease_one'))!;
  assert.deepEqual([reopened.state, reopened.finalizing_by, reopened.finalize_until], ['open', null, null]);
  assert.equal(await ra.claim(T, 'up_lease_one', 'A', t0 + 5000), true, 'the client’s retry finalizes');
  assert.equal(await ra.deleteOpen(T, 'up_lease_one'), false);
}

onTwoConnections('the finalize lease', scenario);
