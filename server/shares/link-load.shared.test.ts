/**
 * The link guard's counters shared by several instances (docs/operations.md,
 * "Several instances"): two repositories on one database, as two instances
 * have them, fill one link's cap together; a freed slot is taken again; a
 * holder that stops renewing (a killed instance) loses its slots once its
 * lease passed; addresses are counted across both within the hour; an
 * address's stream and its accelerator strikes are seen by both; streams
 * racing on both for a link's last slots never pass its cap. On
 * SQLite (the server's same code path) and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { DEFAULT_TENANT, type Db } from '../db';
import { LinkLoadRepo } from './link-load.repo';
import { onTwoConnections } from '../../test/helpers/two-connections';

const HOUR = 3_600_000;
const T = DEFAULT_TENANT;
const count = async (db: Db, q: string) => Number((await db.async.sql<{ n: number }>(q))[0].n);

async function scenario(a: Db, b: Db) {
  const [ra, rb] = [new LinkLoadRepo(a), new LinkLoadRepo(b)];
  const t = 1_000_000;
  const slots = [await ra.take(T, 1, 3, 'A', t + 1000, t), await rb.take(T, 1, 3, 'B', t + 1000, t), await ra.take(T, 1, 3, 'A', t + 1000, t)];
  assert.deepEqual(
    slots.map((s) => s?.slot),
    [1, 2, 3],
  );
  assert.equal(await rb.take(T, 1, 3, 'B', t + 1000, t), null, 'the cap holds across both');
  assert.equal(await ra.take(T, 1, 3, 'A', t + 1000, t), null);
  assert.equal((await rb.take(T, 2, 3, 'B', t + 1000, t))?.slot, 1, 'another link has its own slots');
  await ra.free(slots[1]!, 'A');
  assert.equal(await rb.take(T, 1, 3, 'B', t + 1000, t), null, 'a slot is freed only by its holder');
  await rb.free(slots[1]!, 'B');
  assert.equal((await rb.take(T, 1, 3, 'B', t + 1000, t))?.slot, 2, 'the freed slot is taken again');
  assert.equal(await rb.take(T, 1, 2, 'B', t + 1000, t), null, 'a lowered cap admits nothing while over it');

  // B keeps renewing; A stops (killed): past A's lease its two slots are free again, B's is not.
  await rb.renew([T], 'B', t + 5000);
  const later = t + 2000;
  const taken = [
    await rb.take(T, 1, 3, 'B', later + 1000, later),
    await rb.take(T, 1, 3, 'B', later + 1000, later),
    await rb.take(T, 1, 3, 'B', later + 1000, later),
  ];
  assert.deepEqual(
    taken.map((s) => s?.slot),
    [1, 3, undefined],
  );
  await ra.prune(T, t + 4000, t, t);
  assert.equal(await count(a, 'SELECT count(*) AS n FROM link_streams WHERE share_id = 1'), 1, 'the prune drops passed slots (only B’s renewed one stays)');

  // Twelve streams of one link racing on both instances for a cap of four: four distinct slots, no more.
  const raced = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? ra : rb).take(T, 4, 4, i % 2 ? 'A' : 'B', t + 1000, t)));
  assert.deepEqual(
    raced
      .filter((x) => x)
      .map((x) => x!.slot)
      .sort(),
    [1, 2, 3, 4],
  );
  // Visits of new addresses at once: each counted, the last answer sees them all.
  const seen = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? ra : rb).see(T, 5, `192.0.2.${i}`, t, t - HOUR)));
  assert.equal(Math.max(...seen), 6);
  // Strikes of one address at once: the last to count sees them all (so a burst crossing the threshold suspends).
  const struck = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? ra : rb).strike(T, 6, '198.51.100.50', t + i, t - 1)));
  assert.equal(Math.max(...struck), 8);

  assert.equal(await ra.see(T, 1, '203.0.113.1', t, t - HOUR), 1);
  assert.equal(await rb.see(T, 1, '203.0.113.2', t, t - HOUR), 2, 'the other instance counts on');
  assert.equal(await ra.see(T, 1, '203.0.113.2', t + 10, t - HOUR), 2, 'an address is counted once');
  assert.equal(await rb.see(T, 1, '203.0.113.3', t + HOUR, t), 2, 'the first address left the hour');
  await ra.prune(T, t + HOUR, t + 5, t);
  await rb.forget(T, 1);
  assert.equal(await ra.see(T, 1, '203.0.113.4', t + HOUR, t), 1, 'a re-enabled link starts clean');

  // An accelerator's ranges spread over both: its open stream and its strikes are seen by either.
  const s0 = t + 2 * HOUR;
  const window = 600_000;
  const strikes = () => count(a, 'SELECT count(*) AS n FROM link_strikes WHERE share_id = 3');
  assert.equal((await ra.take(T, 3, 5, 'A', s0 + 1000, s0, '198.51.100.7'))?.slot, 1);
  assert.equal(await rb.holds(T, 3, '198.51.100.7', s0), true, 'the other instance sees the address’s stream');
  assert.equal(await rb.holds(T, 3, '198.51.100.8', s0), false);
  assert.equal(await rb.holds(T, 3, '198.51.100.7', s0 + 2000), false, 'not once its lease passed');
  assert.equal(await ra.strike(T, 3, '198.51.100.7', s0, s0 - window), 1);
  assert.equal(await rb.strike(T, 3, '198.51.100.7', s0 + 1, s0 - window), 2, 'strikes add up across instances');
  assert.equal(await rb.strike(T, 3, '198.51.100.9', s0 + 2, s0 - window), 1, 'per address');
  assert.equal(await ra.strike(T, 3, '198.51.100.7', s0 + window + 10, s0 + 10), 1, 'old strikes leave the window');
  await ra.prune(T, s0 + window + 10, s0, s0 + 10);
  assert.equal(await strikes(), 1, 'the prune drops strikes out of the window');
  await rb.forget(T, 3);
  assert.equal(await strikes(), 0, 'a re-enabled link forgets its strikes');
}

onTwoConnections('the link counters', scenario);
