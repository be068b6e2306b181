/**
 * Tenants (docs/tenants.md, "The nodes"): a storage's catalogue is its tenant's. Step 2 makes other tenants;
 * until then a storage is moved to tenant 2 in the database with its nodes (a child carries its storage's
 * tenant), and tenant 1's person meets its files, folders and node ids as missing ones (404 `not_found`, no
 * search hit); moved back, they answer again.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

describe('tenants: the catalogue of a storage', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanup: () => void;
  let storage: number;
  let node: number;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-tenant-nodes-'));
    writeFileSync(join(root, 'wombat-report.txt'), 'a wombat');
    s = await startTestServer();
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { rbac_enabled: false, name: 'Moved', driver: 'local', config: { path: root } },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    storage = st.body.id;
    // The storage's first sync catalogues the file: poll the listing (a loaded machine takes seconds).
    for (let until = Date.now() + 60_000; !node; await new Promise((r) => setTimeout(r, 200))) {
      const listed = await s.api('GET', '/api/files/manager?path=/Moved', { token: admin });
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      node = listed.body.entries?.find((e: { name: string }) => e.name === 'wombat-report.txt')?.id;
      if (!node && Date.now() > until) assert.fail(`not listed: ${JSON.stringify(listed.body)}`);
    }
    // A ready thumbnail in the cache, so the node-id door answers it before the move.
    await s.server.db.async.sql("UPDATE nodes SET thumb_state = 'ready' WHERE tenant_id = 1 AND id = ?", [node]);
    writeFileSync(join(s.server.dirs.thumbs, `${node}.jpg`), 'jpeg');
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  const move = async (tenant: number) => {
    await s.server.db.async.sql('UPDATE storages SET tenant_id = ? WHERE id = ?', [tenant, storage]);
    await s.server.db.async.sql('UPDATE nodes SET tenant_id = ? WHERE storage_id = ?', [tenant, storage]);
    await s.server.catalogue.repo.load();
  };
  const doors = async () => ({
    list: await s.api('GET', '/api/files/manager?path=/Moved', { token: admin }),
    raw: await s.api('GET', '/api/files/raw?path=/Moved/wombat-report.txt', { token: admin }),
    thumb: await s.api('GET', `/api/files/thumb/${node}`, { token: admin }),
    search: await s.api('GET', '/api/files/search?q=wombat', { token: admin }),
  });

  test('a storage moved to another tenant: its folder, file and node id answer 404, and search finds nothing of it', async () => {
    // Names are indexed for search after the sync has listed them (the indexer runs behind it): wait for the hit.
    let mine = await doors();
    for (let until = Date.now() + 30_000; mine.search.body.total !== 1 && Date.now() < until; mine = await doors())
      await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual([mine.list.status, mine.raw.status, mine.thumb.status, mine.search.status], [200, 200, 200, 200]);
    assert.equal(mine.search.body.total, 1, JSON.stringify(mine.search.body));

    await move(2);
    const theirs = await doors();
    for (const r of [theirs.list, theirs.raw, theirs.thumb]) assert.deepEqual([r.status, r.body?.error], [404, 'not_found'], JSON.stringify(r.body));
    assert.deepEqual([theirs.search.status, theirs.search.body.total], [200, 0], 'no hit of another tenant');
    const [row] = await s.server.db.async.sql<{ n: number | string }>('SELECT count(*) AS n FROM nodes WHERE tenant_id = 2 AND storage_id = ?', [storage]);
    assert.ok(Number(row.n) >= 1, 'its nodes are still there, in tenant 2');

    await move(1);
    const back = await doors();
    assert.deepEqual([back.list.status, back.raw.status, back.thumb.status, back.search.body.total], [200, 200, 200, 1]);
  });
});
