/**
 * The link guard's counters shared by several instances (docs/operations.md,
 * "Several instances"): two repositories on one database, as two instances
 * have them, fill one link's cap together; a freed slot is taken again; a
 * holder that stops renewing (a killed instance) loses its slots once its
 * lease passed; addresses are counted across both within the hour; an
 * address's stream and its accelerator strikes are seen by both. On
 * SQLite (the server's same code path) and PostgreSQL.
 */
import assert from 'node:assert/strict';
import type { Db } from '../db';
import { LinkLoadRepo } from './link-load.repo';
import { onTwoConnections } from '../../test/helpers/two-connections';

const HOUR = 3_600_000;

function scenario(a: Db, b: Db) {
  const [ra, rb] = [new LinkLoadRepo(a), new LinkLoadRepo(b)];
  const t = 1_000_000;
  const slots = [ra.take(1, 3, 'A', t + 1000, t), rb.take(1, 3, 'B', t + 1000, t), ra.take(1, 3, 'A', t + 1000, t)];
  assert.deepEqual(slots.map((s) => s?.slot), [1, 2, 3]);
  assert.equal(rb.take(1, 3, 'B', t + 1000, t), null, 'the cap holds across both');
  assert.equal(ra.take(1, 3, 'A', t + 1000, t), null);
  assert.equal(rb.take(2, 3, 'B', t + 1000, t)?.slot, 1, 'another link has its own slots');
  ra.free(slots[1]!, 'A');
  assert.equal(rb.take(1, 3, 'B', t + 1000, t), null, 'a slot is freed only by its holder');
  rb.free(slots[1]!, 'B');
  assert.equal(rb.take(1, 3, 'B', t + 1000, t)?.slot, 2, 'the freed slot is taken again');
  assert.equal(rb.take(1, 2, 'B', t + 1000, t), null, 'a lowered cap admits nothing while over it');

  // B keeps renewing; A stops (killed): past A's lease its two slots are free again, B's is not.
  rb.renew('B', t + 5000);
  const later = t + 2000;
  const taken = [rb.take(1, 3, 'B', later + 1000, later), rb.take(1, 3, 'B', later + 1000, later), rb.take(1, 3, 'B', later + 1000, later)];
  assert.deepEqual(taken.map((s) => s?.slot), [1, 3, undefined]);
  ra.prune(t + 4000, t, t);
  assert.equal(Number((a.sqlite.prepare('SELECT count(*) AS n FROM link_streams WHERE share_id = 1').get() as { n: number }).n), 1, 'the prune drops passed slots (only B’s renewed one stays)');

  assert.equal(ra.see(1, '203.0.113.1', t, t - HOUR), 1);
  assert.equal(rb.see(1, '203.0.113.2', t, t - HOUR), 2, 'the other instance counts on');
  assert.equal(ra.see(1, '203.0.113.2', t + 10, t - HOUR), 2, 'an address is counted once');
  assert.equal(rb.see(1, '203.0.113.3', t + HOUR, t), 2, 'the first address left the hour');
  ra.prune(t + HOUR, t + 5, t);
  rb.forget(1);
  assert.equal(ra.see(1, '203.0.113.4', t + HOUR, t), 1, 'a re-enabled link starts clean');

  // An accelerator's ranges spread over both: its open stream and its strikes are seen by either.
  const s0 = t + 2 * HOUR;
  const window = 600_000;
  const strikes = () => Number((a.sqlite.prepare('SELECT count(*) AS n FROM link_strikes WHERE share_id = 3').get() as { n: number }).n);
  assert.equal(ra.take(3, 5, 'A', s0 + 1000, s0, '198.51.100.7')?.slot, 1);
  assert.equal(rb.holds(3, '198.51.100.7', s0), true, 'the other instance sees the address’s stream');
  assert.equal(rb.holds(3, '198.51.100.8', s0), false);
  assert.equal(rb.holds(3, '198.51.100.7', s0 + 2000), false, 'not once its lease passed');
  assert.equal(ra.strike(3, '198.51.100.7', s0, s0 - window), 1);
  assert.equal(rb.strike(3, '198.51.100.7', s0 + 1, s0 - window), 2, 'strikes add up across instances');
  assert.equal(rb.strike(3, '198.51.100.9', s0 + 2, s0 - window), 1, 'per address');
  assert.equal(ra.strike(3, '198.51.100.7', s0 + window + 10, s0 + 10), 1, 'old strikes leave the window');
  ra.prune(s0 + window + 10, s0, s0 + 10);
  assert.equal(strikes(), 1, 'the prune drops strikes out of the window');
  rb.forget(3);
  assert.equal(strikes(), 0, 'a re-enabled link forgets its strikes');
}

onTwoConnections('the link counters', scenario);
