/**
 * The typed job registry: the composition root registers a handler for every
 * listed job kind and for nothing unlisted, and boot stops when a listed kind
 * has no handler.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../server/config';
import { compose } from '../../server/compose';
import { openDatabase } from '../../server/db';
import { JobQueue } from '../../server/jobs';
import { JOB_NAMES, assertEveryJobHandled } from '../../server/jobs-registry';
import { createLogger } from '../../server/lib/log';
import { tempDir } from '../helpers/tools';

test('the composition root handles exactly the listed job kinds', async () => {
  const t = tempDir('filedock-jobs-');
  try {
    const sv = await compose(loadConfig({ SERVICE_DATA_DIR: t.dir, SERVICE_UPDATE_CHECK: '0' }), { role: 'cli', logger: createLogger('error') });
    try {
      assert.deepEqual(sv.queue.registeredKinds().sort(), [...JOB_NAMES].sort());
    } finally {
      await sv.close();
    }
  } finally {
    t.cleanup();
  }
});

test('boot stops, naming the kind, when a listed job kind has no handler', async () => {
  const t = tempDir('filedock-jobs-');
  const db = openDatabase(`${t.dir}/db.sqlite`);
  try {
    const queue = new JobQueue(db);
    for (const kind of JOB_NAMES.filter((k) => k !== 'thumb')) queue.register(kind, async () => undefined);
    assert.throws(() => assertEveryJobHandled(queue), /job kinds without a handler: thumb/);
    queue.register('thumb', async () => undefined);
    assert.doesNotThrow(() => assertEveryJobHandled(queue));
  } finally {
    await db.close();
    t.cleanup();
  }
});
