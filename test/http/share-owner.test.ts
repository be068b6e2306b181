/**
 * A link's creator read on the asynchronous data layer (issue 30): disabling the creator's account makes every
 * door of its links answer `revoked` at once and re-enabling revives them. Runs on SQLite and,
 * under TEST_DATABASE=postgres, on PostgreSQL.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { DEFAULT_TENANT } from '../../server/db';

let s: TestServer;
let admin: string;
let root: { dir: string; cleanup: () => void };
before(async () => {
  root = tempDir('filedock-share-owner-');
  writeFileSync(join(root.dir, 'a.txt'), 'x'.repeat(4096));
  mkdirSync(join(root.dir, 'photos'));
  mkdirSync(join(root.dir, 'inbox'));
  writeFileSync(join(root.dir, 'photos', 'one.txt'), 'one\n'.repeat(100));
  s = await startTestServer({ SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_PATH: root.dir, SERVICE_DEFAULT_STORAGE_NAME: 'Files' });
  admin = await s.login();
  const storageId = s.server.catalogue.repo.all(DEFAULT_TENANT)[0].id;
  assert.equal((await s.api('PATCH', `/api/admin/storages/${storageId}`, { token: admin, body: { rbac_enabled: false } })).status, 200);
  assert.equal((await s.api('PATCH', '/api/admin/homes', { token: admin, body: { enabled: false } })).status, 200);
  await s.server.catalogue.syncer.requestSync(storageId);
  for (let i = 0; i < 200 && !(await s.server.catalogue.nodes.get({ id: storageId, tenant_id: 1 }, 'photos/one.txt')); i++)
    await new Promise((r) => setTimeout(r, 50));
});

after(async () => {
  await s?.close();
  root?.cleanup();
});

test('disabling a link creator revokes its links, file requests and folder ZIPs at once; enabling revives them; no sync database call', async () => {
  const u = await s.server.auth.users.create(DEFAULT_TENANT, { email: 'creator@example.test', password: 'creator-password-1', role: 'user' });
  let tok = await s.login('creator@example.test', 'creator-password-1');
  const link = async (body: Record<string, unknown>) => {
    const r = await s.api('POST', '/api/files/share', { token: tok, body });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.state, 'active');
    return r.body as { id: number; token: string };
  };
  const file = await link({ path: '/Files/a.txt' });
  const folder = await link({ path: '/Files/photos' });
  const drop = await link({ path: '/Files/inbox', kind: 'drop' });

  await s.server.auth.users.update(DEFAULT_TENANT, u.id, { disabled: true });
  {
    for (const t of [file.token, folder.token, drop.token]) {
      const meta = await s.api('GET', `/api/files/share/${t}`);
      assert.deepEqual([meta.status, meta.body.error], [410, 'revoked'], t);
    }
    const page = await fetch(`${s.url}/s/${file.token}`, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 404);
    assert.match(await page.text(), /revoked/i);
    const zip = await fetch(`${s.url}/s/${folder.token}?zip=1`);
    assert.deepEqual([zip.status, zip.headers.get('content-type')?.startsWith('application/zip')], [404, false]);
    await zip.arrayBuffer();
    assert.equal((await s.api('POST', `/api/public/drop/${drop.token}/submissions`, { body: {} })).body.error, 'revoked');
    // The admin sees the state too: a revoked link cannot be mailed.
    const mail = await s.api('POST', '/api/files/permissions/share-mail', { token: admin, body: { id: file.id, email: 'x@example.test' } });
    assert.deepEqual([mail.status, mail.body.error], [409, 'link_unavailable']);
  }

  await s.server.auth.users.update(DEFAULT_TENANT, u.id, { disabled: false });
  {
    assert.equal((await s.api('GET', `/api/files/share/${file.token}`)).status, 200);
    assert.equal(await (await fetch(`${s.url}/s/${file.token}`)).text(), 'x'.repeat(4096));
    const zip = await fetch(`${s.url}/s/${folder.token}?zip=1`);
    assert.deepEqual([zip.status, zip.headers.get('content-type')], [200, 'application/zip']);
    assert.ok((await zip.arrayBuffer()).byteLength > 0);
    assert.equal((await s.api('GET', `/api/files/share/${drop.token}`)).status, 200);
  }
  tok = await s.login('creator@example.test', 'creator-password-1');
  const mine = await s.api('GET', '/api/files/share', { token: tok });
  assert.deepEqual(
    (mine.body.shares as { id: number; state: string }[]).map((v) => [v.id, v.state]).sort(),
    [file.id, folder.id, drop.id].map((id) => [id, 'active']).sort(),
  );
});
