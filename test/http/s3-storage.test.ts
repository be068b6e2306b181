import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server';
import { startS3rver, seedObjects, S3RVER_KEY } from '../helpers/s3rver';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('first boot seeds an S3 storage from SERVICE_DEFAULT_STORAGE_S3_*; secrets masked; offline marker and recovery', async () => {
  const s3 = await startS3rver();
  seedObjects(s3, [{ key: 'seeded/docs/readme.txt', body: 'hello from s3' }]);
  const s = await startTestServer({
    SERVICE_DEFAULT_STORAGE_DRIVER: 's3',
    SERVICE_DEFAULT_STORAGE_NAME: 'Bucket',
    SERVICE_DEFAULT_STORAGE_S3_BUCKET: s3.bucket,
    SERVICE_DEFAULT_STORAGE_S3_PREFIX: 'seeded',
    SERVICE_DEFAULT_STORAGE_S3_ENDPOINT: s3.endpoint,
    SERVICE_DEFAULT_STORAGE_S3_REGION: 'us-east-1',
    SERVICE_DEFAULT_STORAGE_S3_ACCESS_KEY: S3RVER_KEY,
    SERVICE_DEFAULT_STORAGE_S3_SECRET_KEY: S3RVER_KEY,
  });
  try {
    const admin = await s.login();
    const list = await s.api('GET', '/api/admin/storages', { token: admin });
    assert.equal(list.body.storages.length, 1);
    const st = list.body.storages[0];
    assert.equal(st.driver, 's3');
    assert.equal(st.config.secret_key, '***', 'secrets read back masked');
    const raw = s.server.db.sqlite!.prepare('SELECT config FROM storages WHERE id = ?').get(st.id) as { config: string };
    assert.doesNotMatch(raw.config, new RegExp(`"secret_key":"${S3RVER_KEY}"`), 'encrypted at rest');
    let entries: Array<{ name: string }> = [];
    for (let i = 0; i < 100 && entries.length === 0; i++) {
      entries = (await s.api('GET', '/api/files/manager?path=/Bucket/docs', { token: admin })).body.entries ?? [];
      if (!entries.length) await sleep(100);
    }
    assert.deepEqual(
      entries.map((e) => e.name),
      ['readme.txt'],
    );
    const dl = await fetch(`${s.url}/api/files/raw?path=${encodeURIComponent('/Bucket/docs/readme.txt')}`, {
      headers: { authorization: `Bearer ${admin}` },
      redirect: 'follow',
    });
    assert.equal(await dl.text(), 'hello from s3');

    // The backend goes away: the listing is still served from the catalogue, marked offline.
    await s3.stop();
    await s.api('POST', `/api/admin/storages/${st.id}/sync`, { token: admin });
    let view;
    for (let i = 0; i < 100; i++) {
      view = (await s.api('GET', `/api/admin/storages/${st.id}`, { token: admin })).body;
      if (view.status === 'offline') break;
      await sleep(100);
    }
    assert.equal(view.status, 'offline');
    const cached = await s.api('GET', '/api/files/manager?path=/Bucket/docs', { token: admin });
    assert.equal(cached.status, 200, JSON.stringify(cached.body));
    assert.deepEqual(
      cached.body.entries.map((e: { name: string }) => e.name),
      ['readme.txt'],
    );
    assert.equal(cached.body.storage.offline, true);
    // It comes back without a restart.
    await s3.start();
    const run = await s.api('POST', `/api/admin/storages/${st.id}/sync`, { token: admin });
    for (let i = 0; i < 100; i++) {
      const r = (await s.api('GET', `/api/admin/sync/runs/${run.body.run_id}`, { token: admin })).body;
      if (r.status === 'completed') break;
      await sleep(100);
    }
    assert.equal((await s.api('GET', `/api/admin/storages/${st.id}`, { token: admin })).body.status, 'online');
  } finally {
    await s.close();
    await s3.close();
  }
});
