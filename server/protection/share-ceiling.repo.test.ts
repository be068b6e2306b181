import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ShareCeilingRepo } from './share-ceiling.repo';
import { SharesRepo } from '../shares/shares.repo';
import { openTestDb, testStorage } from '../../test/helpers/test-database';
import { DEFAULT_TENANT } from '../db';

test('links that outlive the share ceiling: live ones with no expiry or a later one, on this run’s database', async () => {
  const { db, close } = await openTestDb();
  try {
    const storage = await testStorage(db);
    const shares = new SharesRepo(db);
    const link = (token: string, expires_at: string | null) =>
      shares.insert(DEFAULT_TENANT, {
        token,
        kind: 'link',
        owner_id: 1,
        storage_id: storage,
        rel: 'a.txt',
        is_dir: 0,
        ttl: null,
        expires_at,
        expiry_clamped: 0,
        max_downloads: null,
        max_uploads: null,
        pin_hash: null,
        comment: null,
        drop_settings: null,
        created_at: '2026-12-01T00:00:00.000Z',
      });
    const ceiling = '2027-01-01T00:00:00.000Z';
    const repo = new ShareCeilingRepo(db);
    assert.equal(await repo.countOutliving(DEFAULT_TENANT, ceiling), 0, 'no links: 0, not null');
    await link('forever', null);
    await link('later', '2027-06-01T00:00:00.000Z');
    await link('sooner', '2026-12-20T00:00:00.000Z');
    await link('at-the-ceiling', ceiling);
    // Revoked with a stamp past the ceiling, so only `revoked_at` keeps it out of the count.
    await shares.revoke(DEFAULT_TENANT, (await link('revoked', null))!, '2027-03-01T00:00:00.000Z');
    const n = await repo.countOutliving(DEFAULT_TENANT, ceiling);
    assert.equal(typeof n, 'number', 'a number on both databases (PostgreSQL counts in bigint)');
    assert.equal(n, 2);
    assert.equal(await repo.countOutliving({ tenant_id: 2 }, ceiling), 0, 'another tenant’s links are not counted');
  } finally {
    await close();
  }
});
