/**
 * The login throttle shared by several instances (docs/operations.md,
 * "Several instances"): two throttles on one database, as two instances have
 * them, count failures of one login against one limit; a lock set through one
 * is seen by the other; a sign-in through one forgets it for both; after the
 * lock a new window starts. On PostgreSQL (where the server uses it) and on
 * SQLite (the same SQL, portable).
 */
import assert from 'node:assert/strict';
import type { Db } from '../db';
import { LoginThrottle } from './throttle';
import { isAppError } from '../errors';
import { onTwoConnections } from '../../test/helpers/two-connections';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const limited = async (fn: () => Promise<void>) => {
  try {
    await fn();
    return false;
  } catch (e) {
    if (isAppError(e) && e.code === 'rate_limited') return true;
    throw e;
  }
};

/** A login typed in tenant 1. */
const one = (login: string) => ({ tenant_id: 1, login });

async function scenario(a: Db, b: Db) {
  const mk = (db: Db) => new LoginThrottle({ maxAttempts: 5, lockMs: 400, shared: { db, scope: 'login' } });
  const [ta, tb] = [mk(a), mk(b)];
  assert.equal(await ta.fail(one('Bob'), '10.0.0.1'), 4);
  assert.equal(await ta.fail(one('bob'), '10.0.0.1'), 3);
  assert.equal(await ta.fail(one('bob'), '10.0.0.1'), 2);
  assert.equal(await tb.fail(one('bob'), '10.0.0.2'), 1, 'the other instance counts on from the same total');
  assert.equal(await limited(() => ta.check(one('bob'), '10.0.0.9')), false);
  assert.equal(await tb.fail(one('BOB'), '10.0.0.2'), 0, 'the fifth failure, wherever it lands, locks');
  assert.equal(await limited(() => ta.check(one('bob'), '10.0.0.9')), true, 'locked on A');
  assert.equal(await limited(() => tb.check(one('bob'), '10.0.0.8')), true, 'locked on B');
  // The same name typed in another tenant is another account: its own counter, not locked.
  assert.equal(await limited(() => ta.check({ tenant_id: 2, login: 'bob' }, '10.0.0.9')), false, "tenant 2's bob is not locked");
  assert.equal(await tb.fail({ tenant_id: 2, login: 'bob' }, '10.0.0.4'), 4, "tenant 2's bob counts from its own total");
  // Another scope (the probes throttle) is not touched.
  assert.equal(await limited(() => new LoginThrottle({ maxAttempts: 5, lockMs: 400, shared: { db: a, scope: 'probe' } }).check(one('bob'), '10.0.0.9')), false);
  await sleep(450);
  assert.equal(await limited(() => tb.check(one('bob'), '10.0.0.8')), false, 'the lock ended');
  assert.equal(await tb.fail(one('bob'), '10.0.0.3'), 4, 'a new window starts after the lock');
  await ta.succeed(one('bob'));
  assert.equal(await tb.fail(one('bob'), '10.0.0.3'), 4, 'a sign-in through A forgot the failures for B too');
}

onTwoConnections('the login throttle', scenario);
