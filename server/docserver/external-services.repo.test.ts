import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ExternalServicesRepo, type ExternalValues } from './external-services.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';

let t: TestDb;
let repo: ExternalServicesRepo;
before(async () => {
  t = await openTestDb();
  repo = new ExternalServicesRepo(t.db);
});
after(() => t?.close());

const values = (v: Partial<ExternalValues>): ExternalValues => ({ url: '', jwt_secret: '', callback_url: '', env_managed: 0, reset: false, ...v });

test('a change sees the stored row, writes what it decides, and forgets the health check only on reset', async () => {
  assert.equal(await repo.read('docserver'), undefined);
  const r = await repo.change('docserver', (cur) => (assert.equal(cur, undefined), values({ url: 'http://a.test', jwt_secret: 'enc' })));
  assert.equal(r.before, undefined);
  assert.equal(r.after?.url, 'http://a.test');
  await repo.recordCheck('docserver', true, '2026-12-05T10:00:00.000Z');
  await repo.change('docserver', (cur) => values({ ...cur!, callback_url: 'http://cb.test' }));
  assert.equal((await repo.read('docserver'))?.healthy, 1, 'same address: the check stands');
  const moved = await repo.change('docserver', (cur) => values({ ...cur!, url: 'http://b.test', reset: true }));
  assert.equal(moved.before?.healthy, 1);
  assert.equal(moved.after?.healthy, null);
  assert.equal(moved.after?.callback_url, 'http://cb.test');
  const none = await repo.change('docserver', () => undefined);
  assert.deepEqual(none.after, none.before, 'deciding nothing writes nothing');
  await assert.rejects(
    repo.change('docserver', () => {
      throw new Error('refused');
    }),
    /refused/,
  );
  assert.equal((await repo.read('docserver'))?.url, 'http://b.test');
});

test('changes racing each decide from the row the one before stored (no lost update)', async () => {
  await repo.change('diagram', () => values({ url: 'http://d.test/' }));
  await Promise.all(Array.from({ length: 6 }, () => repo.change('diagram', (cur) => values({ url: `${cur!.url}x` }))));
  assert.equal((await repo.read('diagram'))?.url, 'http://d.test/xxxxxx');
});
