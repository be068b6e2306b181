import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pingDatabase } from './index';
import { openTestDb, testDialect } from '../../test/helpers/test-database';

test('the health probe answers, and on PostgreSQL the event loop runs while it waits', async () => {
  const { db, close } = await openTestDb();
  try {
    assert.equal(await pingDatabase(db), undefined);
    const first = await Promise.race([pingDatabase(db).then(() => 'ping'), new Promise((r) => setImmediate(() => r('event loop')))]);
    // SQLite answers in the same tick; a PostgreSQL round trip leaves the loop free.
    assert.equal(first, testDialect() === 'postgres' ? 'event loop' : 'ping');
  } finally {
    await close();
  }
});

test('after close the probe fails: the database is really closed, also when no query builder statement ran', async () => {
  const { db, close } = await openTestDb();
  await pingDatabase(db);
  await close();
  await assert.rejects(pingDatabase(db));
});
