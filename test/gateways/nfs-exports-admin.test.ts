/**
 * The admin's NFS export routes name the field at fault, so the Gateways
 * screen can show each refusal next to its field: a path the account cannot
 * open (missing storage or folder, a file) is `validation_failed` on `path`,
 * a bad address on `clients`, an unknown account on `user_id`; nothing is
 * stored by a refused request.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

describe('NFS exports admin API: field errors', () => {
  let s: TestServer;
  let admin: string;
  let user_id: number;
  let cleanup: () => void;

  before(async () => {
    let root: string;
    ({ dir: root, cleanup } = tempDir('filedock-nfs-admin-'));
    mkdirSync(join(root, 'films'));
    writeFileSync(join(root, 'a.txt'), 'a');
    s = await startTestServer({});
    admin = await s.login();
    assert.equal(
      (await s.api('POST', '/api/admin/storages', { token: admin, body: { rbac_enabled: false, name: 'Box', driver: 'local', config: { path: root } } }))
        .status,
      200,
    );
    const me = (await s.api('GET', '/api/auth/me', { token: admin })).body;
    user_id = me.user?.id ?? me.id;
  });
  after(async () => {
    await s?.close();
    cleanup?.();
  });

  const add = (body: Record<string, unknown>) =>
    s.api('POST', '/api/admin/gateways/nfs/exports', { token: admin, body: { clients: '192.168.1.0/24', user_id, ...body } });

  for (const [what, path] of [
    ['a missing storage', '/Nope'],
    ['a missing folder', '/Box/none'],
    ['a file', '/Box/a.txt'],
  ] as const) {
    test(`${what} is refused on the path field`, async () => {
      const r = await add({ path });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.error, 'validation_failed');
      assert.equal(r.body.details.field, 'path');
    });
  }

  test('bad clients and an unknown account name their fields; a good export is stored, then edited', async () => {
    const clients = (await add({ path: '/Box', clients: '10.0.0.1, 10.0.0.0/99' })).body.details;
    assert.deepEqual([clients.field, clients.value], ['clients', '10.0.0.0/99']);
    assert.equal((await add({ path: '/Box', user_id: 99999 })).body.details.field, 'user_id');
    assert.deepEqual((await s.api('GET', '/api/admin/gateways/nfs/exports', { token: admin })).body.exports, [], 'nothing stored');
    const ok = await add({ path: '/Box/films' });
    assert.equal(ok.status, 201);
    const bad = await s.api('PATCH', `/api/admin/gateways/nfs/exports/${ok.body.export.id}`, { token: admin, body: { path: '/Box/none' } });
    assert.equal(bad.body.details.field, 'path');
    assert.equal((await s.api('GET', '/api/admin/gateways/nfs/exports', { token: admin })).body.exports[0].path, '/Box/films', 'unchanged');
  });
});
