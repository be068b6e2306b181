/**
 * Tenants (docs/tenants.md, step 1): an upload session and a trash item are found only in their tenant. Step 2
 * makes other tenants; until then a row is moved to tenant 2 in the database, and its owner in tenant 1 meets
 * it as a missing one (404 `not_found`), then finds it again once it is moved back.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { otherInstanceUploads, startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

describe('tenants: upload sessions and trash items', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanup: () => void;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-tenant-up-'));
    s = await startTestServer();
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Up', driver: 'local', config: { path: root } } });
    assert.equal(st.status, 200, JSON.stringify(st.body));
  });
  after(async () => {
    await s.close();
    cleanup();
  });

  const move = async (sql: string, id: string | number, tenant: number) => {
    await s.server.db.async.sql(sql, [tenant, id]);
  };
  /** A session of 10 bytes at `path`, opened by the admin in tenant 1. */
  const open = async (path: string): Promise<string> => {
    const init = await s.api('POST', '/api/files/upload/init', { token: admin, body: { path, size: 10 } });
    assert.equal(init.status, 200, JSON.stringify(init.body));
    return init.body.upload_id;
  };
  const sessionToTenant = async (id: string, t: number) => {
    await move('UPDATE upload_sessions SET tenant_id = ? WHERE id = ?', id, t);
    await move('UPDATE upload_parts SET tenant_id = ? WHERE upload_id = ?', id, t);
  };

  test('an upload session moved to another tenant answers 404 to its owner’s chunk, status, finalize and abort', async () => {
    const id = await open('/Up/moved.bin');
    const chunk = () =>
      s.api('POST', `/api/files/upload/chunk?upload_id=${id}&part=1`, {
        token: admin,
        raw: new Uint8Array(Buffer.from('0123456789')),
        headers: { 'content-type': 'application/octet-stream' },
      });
    const sent = await chunk();
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    const etags = [{ part: 1, etag: sent.body.etag }];

    await sessionToTenant(id, 2);
    for (const r of [
      await chunk(),
      await s.api('GET', `/api/files/upload/status?upload_id=${id}`, { token: admin }),
      await s.api('POST', '/api/files/upload/finalize', { token: admin, body: { upload_id: id, etags } }),
      await s.api('POST', '/api/files/upload/abort', { token: admin, body: { upload_id: id } }),
    ]) {
      assert.equal(r.status, 404, JSON.stringify(r.body));
      assert.equal(r.body.error, 'not_found');
    }
    const [row] = await s.server.db.async.sql<{ state: string; tenant_id: number | string }>('SELECT state, tenant_id FROM upload_sessions WHERE id = ?', [id]);
    assert.deepEqual([row.state, Number(row.tenant_id)], ['open', 2], 'neither claimed nor aborted from tenant 1');

    await sessionToTenant(id, 1);
    const done = await s.api('POST', '/api/files/upload/finalize', { token: admin, body: { upload_id: id, etags } });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(readFileSync(join(root, 'moved.bin'), 'utf8'), '0123456789');
  });

  test('a trash item moved to another tenant is neither listed, matched, restored nor purged', async () => {
    assert.equal((await s.api('POST', '/api/files/save-text', { token: admin, body: { path: '/Up/gone.txt', content: 'tenant' } })).status, 200);
    const del = await s.api('POST', '/api/files/delete', { token: admin, body: { paths: ['/Up/gone.txt'] } });
    assert.deepEqual(del.body.deleted, ['/Up/gone.txt']);
    const listed = async () => (await s.api('GET', '/api/files/trash', { token: admin })).body.items.map((i: { id: number }) => i.id);
    const item = (await s.api('GET', '/api/files/trash', { token: admin })).body.items.find((i: { path: string }) => i.path === '/Up/gone.txt');
    assert.ok(item, 'in the trash');
    const sha256 = createHash('sha256').update('tenant').digest('hex');

    await move('UPDATE trash_items SET tenant_id = ? WHERE id = ?', item.id, 2);
    assert.ok(!(await listed()).includes(item.id), 'not listed');
    const same = await s.api('POST', '/api/files/manager/trash/same', { token: admin, body: { sha256 } });
    assert.deepEqual(same.body.items, [], 'not matched by content');
    const restore = await s.api('POST', '/api/files/manager/restore', { token: admin, body: { id: item.id } });
    assert.equal(restore.status, 404, JSON.stringify(restore.body));
    assert.equal(restore.body.error, 'not_found');
    const bulk = await s.api('POST', '/api/files/manager/restore', { token: admin, body: { ids: [item.id] } });
    assert.deepEqual(bulk.body.failed, [{ id: item.id, error: 'not_found' }]);
    const purge = await s.api('POST', '/api/files/trash/purge', { token: admin, body: { ids: [item.id] } });
    assert.deepEqual(purge.body, { purged: [], failed: [{ id: item.id, error: 'not_found' }] });
    const all = await s.api('POST', '/api/files/trash/purge', { token: admin, body: { all: true } });
    assert.ok(!all.body.purged.includes(item.id), 'not purged with the rest');

    await move('UPDATE trash_items SET tenant_id = ? WHERE id = ?', item.id, 1);
    assert.ok((await listed()).includes(item.id), 'listed again in its own tenant');
    const back = await s.api('POST', '/api/files/manager/restore', { token: admin, body: { id: item.id } });
    assert.equal(back.status, 200, JSON.stringify(back.body));
    assert.equal(readFileSync(join(root, 'gone.txt'), 'utf8'), 'tenant');
  });

  test('recovery at start and the hourly sweep find the sessions of every tenant', async () => {
    const at = new Date().toISOString();
    await s.server.db.async.sql("INSERT INTO tenants (id, slug, name, created_at) VALUES (2, 'two', 'Two', ?)", [at]);
    try {
      const id = await open('/Up/elsewhere.bin');
      await sessionToTenant(id, 2);
      // Its finalize was cut short by a crash: recovery at start reopens it, in its own tenant.
      await s.server.db.async.sql("UPDATE upload_sessions SET state = 'finalizing', finalizing_by = 'dead', finalize_until = 0 WHERE id = ?", [id]);
      const uploads = otherInstanceUploads(s, 'restarted');
      assert.deepEqual(await uploads.recover({ everyone: true }), { finished: 0, reopened: 1 });
      const state = async () =>
        (await s.server.db.async.sql<{ state: string }>('SELECT state FROM upload_sessions WHERE tenant_id = 2 AND id = ?', [id]))[0]?.state;
      assert.equal(await state(), 'open');
      await s.server.db.async.sql("UPDATE upload_sessions SET expires_at = '2000-01-01T00:00:00.000Z' WHERE id = ?", [id]);
      assert.equal(await uploads.sweep(), 1, 'expired: swept in its tenant');
      assert.equal(await state(), undefined);
    } finally {
      await s.server.db.async.sql('DELETE FROM tenants WHERE id = 2');
    }
  });
});
