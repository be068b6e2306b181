/**
 * App locks and the document editor, against the fake document server
 * (test/helpers/fake-docserver.ts): a locked file opens for viewing only, and
 * a save callback for it is refused with 423 `locked` and writes nothing; once
 * the lock is cleared the same session's save lands.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeDocserver } from '../helpers/fake-docserver';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { DEFAULT_TENANT } from '../../server/db';

const SECRET = 'shared-docserver-secret-locks';

describe('docserver: a locked file', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanup: () => void;
  let fake: FakeDocserver;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-locks-ds-'));
    fake = await new FakeDocserver(SECRET).start();
    s = await startTestServer();
    admin = await s.login();
    assert.equal(
      (await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Docs', driver: 'local', config: { path: root }, sync_mode: 'poll' } })).status,
      200,
    );
    assert.equal((await s.api('PUT', '/api/admin/external/docserver', { token: admin, body: { url: fake.url, jwt_secret: SECRET } })).status, 200);
  });
  after(async () => {
    await s?.close();
    await fake?.stop();
    cleanup?.();
  });

  test('opens for viewing only; the save callback answers 423 and writes nothing until the lock is cleared', async () => {
    const made = await s.api('POST', '/api/files/manager?action=newfile', { token: admin, body: { path: '/Docs', name: 'contract', type: 'docx' } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const open = await s.api('GET', '/api/files/docserver/config?path=/Docs/contract.docx', { token: admin });
    assert.equal(open.body.edit, true);
    const session = await fake.open(open.body);
    const before = readFileSync(join(root, 'contract.docx'));

    const sid = s.server.services.catalogue.repo.byNameOrUid(DEFAULT_TENANT, 'Docs')!.id;
    const locks = s.server.services.files.locks;
    await locks.set(sid, 'contract.docx', { plugin: 'sign', label: 'Fill and sign', reason: 'signing' }, null);
    try {
      const view = await s.api('GET', '/api/files/docserver/config?path=/Docs/contract.docx', { token: admin });
      assert.equal(view.status, 200);
      assert.equal(view.body.edit, false, 'a locked file opens for viewing');
      const saved = await fake.save(session, 2, Buffer.from('edited while locked'));
      assert.equal(saved.status, 423, JSON.stringify(saved.body));
      assert.equal(saved.body.error, 'locked');
      assert.deepEqual(saved.body.details, {
        plugin: 'sign',
        plugin_label: 'Fill and sign',
        path: '/Docs/contract.docx',
        reason: 'signing',
        reason_text: null,
        until: null,
      });
      assert.ok(readFileSync(join(root, 'contract.docx')).equals(before), 'nothing was written');
    } finally {
      await locks.clear(sid, 'contract.docx', 'sign');
    }
    const again = await fake.save(session, 2, Buffer.from('edited after'));
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(readFileSync(join(root, 'contract.docx'), 'utf8'), 'edited after');
  });
});
