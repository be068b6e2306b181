import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventBus } from '../events';
import { AppStateRepo } from './app-state.repo';
import { AppStates } from './app-state';
import { NodesRepo } from './nodes.repo';
import { openTestDb, testStorage, type TestDb } from '../../test/helpers/test-database';
import { testNodes } from '../../test/helpers/test-nodes';

let t: TestDb;
let repo: AppStateRepo;
let sid = 0;
before(async () => {
  t = await openTestDb();
  repo = new AppStateRepo(t.db, new EventBus(t.db));
  sid = await testStorage(t.db);
});
after(() => t?.close());

test('items are stored per node and read for a subtree in one query; none is no row', async () => {
  const [a, ab, sibling] = await testNodes(t.db, sid, [{ path: 'a', type: 'dir' }, { path: 'a/b.pdf' }, { path: 'a.txt' }, { path: 'a/c.txt' }]);
  const set = (id: number, items: string[]) => t.db.async.unit((x) => repo.setItemsIn(x, { id, tenant_id: 1 }, items));
  await set(ab, ['sign:awaiting']);
  await set(sibling, ['sign:done']);
  await set(a, ['x:y']);
  assert.deepEqual(
    (await repo.within({ id: sid, tenant_id: 1 }, 'a')).sort((x, y) => (x.path < y.path ? -1 : 1)),
    [
      { path: 'a', app_state: '["x:y"]' },
      { path: 'a/b.pdf', app_state: '["sign:awaiting"]' },
    ],
    'not the sibling that only extends its name',
  );
  await set(a, []);
  assert.equal((await repo.within({ id: sid, tenant_id: 1 }, '')).length, 2, 'an empty list is no row');
});

test('two apps putting items on one file at once keep both (the read-decide-write is one transaction)', async () => {
  await testNodes(t.db, sid, [{ path: 'race.pdf' }]);
  const states = new AppStates(t.db, new NodesRepo(t.db), new EventBus(t.db), (id) => ({ id, tenant_id: 1, name: 'Files' }));
  await Promise.all([states.set(sid, 'race.pdf', 'sign', 'awaiting', true), states.set(sid, 'race.pdf', 'ocr', 'queued', true)]);
  assert.deepEqual((await states.of(sid, 'race.pdf')).sort(), ['ocr:queued', 'sign:awaiting']);
});
