/**
 * The link guard's counters shared by several instances (docs/operations.md,
 * "Several instances"): two repositories on one database, as two instances
 * have them, fill one link's cap together; a freed slot is taken again; a
 * holder that stops renewing (a killed instance) loses its slots once its
 * lease passed; addresses are counted across both within the hour. On
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
  ra.prune(t + 4000, t);
  assert.equal(Number((a.sqlite.prepare('SELECT count(*) AS n FROM link_streams WHERE share_id = 1').get() as { n: number }).n), 1, 'the prune drops passed slots (only B’s renewed one stays)');

  assert.equal(ra.see(1, '203.0.113.1', t, t - HOUR), 1);
  assert.equal(rb.see(1, '203.0.113.2', t, t - HOUR), 2, 'the other instance counts on');
  assert.equal(ra.see(1, '203.0.113.2', t + 10, t - HOUR), 2, 'an address is counted once');
  assert.equal(rb.see(1, '203.0.113.3', t + HOUR, t), 2, 'the first address left the hour');
  ra.prune(t + HOUR, t + 5);
  rb.forget(1);
  assert.equal(ra.see(1, '203.0.113.4', t + HOUR, t), 1, 'a re-enabled link starts clean');
}

onTwoConnections('the link counters', scenario);
