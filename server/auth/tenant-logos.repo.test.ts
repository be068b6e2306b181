import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { TenantLogosRepo } from './tenant-logos.repo';
import { openTestDb, type TestDb } from '../../test/helpers/test-database';
import { DEFAULT_TENANT, type TenantScope } from '../db';

const T1 = DEFAULT_TENANT;
const T2: TenantScope = { tenant_id: 2 };

let t: TestDb;
let repo: TenantLogosRepo;
before(async () => {
  t = await openTestDb();
  repo = new TenantLogosRepo(t.db);
});
after(() => t?.close());

test('a logo is stored per tenant, replaced whole, read back byte for byte and removed only in its tenant', async () => {
  const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255, 254, 0]);
  await repo.put(T1, { mime: 'image/png', etag: 'one', bytes });
  assert.equal(await repo.get(T2), undefined, 'another tenant has none');
  assert.equal(await repo.remove(T2), false, 'nor can it remove tenant 1’s');
  const got = await repo.get(T1);
  assert.deepEqual([got?.mime, got?.etag, got?.bytes.equals(bytes)], ['image/png', 'one', true]);

  await repo.put(T2, { mime: 'image/webp', etag: 'two', bytes: Buffer.from('RIFFxxxxWEBP') });
  await repo.put(T1, { mime: 'image/jpeg', etag: 'three', bytes: Buffer.from([0xff, 0xd8, 0xff]) });
  assert.equal((await repo.get(T1))?.etag, 'three', 'replaced');
  assert.equal((await repo.get(T2))?.etag, 'two', 'the other tenant’s untouched');

  assert.equal(await repo.remove(T1), true);
  assert.equal(await repo.remove(T1), false, 'idempotent');
  assert.equal(await repo.get(T1), undefined);
  assert.equal((await repo.get(T2))?.mime, 'image/webp');
});
