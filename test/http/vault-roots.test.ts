/**
 * Where an encrypted folder's record goes when its root does (docs/vault.md, "Boundaries"): it follows
 * the root into the trash (the old path is plain then), back on restore (encrypted again), and away on
 * purge; a storage deleted takes its encrypted folders out of the in-memory roots index at once.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { sqlRow } from '../helpers/sql';
import { encName, fdv1, makeEncryptedFolder, makeVault } from '../helpers/vault';

describe('encrypted roots follow the trash and storage deletion', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanup: () => void;

  before(async () => {
    ({ dir: root, cleanup } = tempDir('filedock-vault-roots-'));
    s = await startTestServer({ SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_NAME: 'Files', SERVICE_DEFAULT_STORAGE_PATH: root });
    admin = await s.login();
    await makeVault(s, admin);
  });
  after(async () => {
    await s?.close();
    cleanup?.();
  });

  const folders = async () => (await s.api('GET', '/api/vault/folders', { token: admin })).body.folders as Array<{ id: number; path: string }>;
  const upload = async (folder: string, name: string, bytes: Buffer): Promise<number> => {
    const form = new FormData();
    form.append('path', folder);
    form.append('file', new Blob([new Uint8Array(bytes)]), name);
    return (await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${admin}` } })).status;
  };
  const plainUpload = (folder: string) => upload(folder, 'plain.txt', Buffer.from('plain words'));
  const trashId = async (orig: string): Promise<number> =>
    (await sqlRow(s.server.db, 'SELECT id FROM trash_items WHERE orig_path = ? ORDER BY id DESC', orig)).id;
  const del = async (path: string) =>
    assert.deepEqual((await s.api('POST', '/api/files/delete', { token: admin, body: { paths: [path] } })).body.deleted, [path]);

  test('trashed, the root stays encrypted in the trash and its old path is plain; restored, encrypted again; purged, its record is gone', async () => {
    const id = await makeEncryptedFolder(s, admin, '/Files/Safe');
    const name = encName();
    assert.equal(await upload('/Files/Safe', name, fdv1(5000)), 200);
    await del('/Files/Safe');
    const item = await trashId('Safe');
    const inTrash = (await folders()).find((f) => f.id === id);
    assert.match(inTrash?.path ?? '', /^\/Files\/\.service-trash\/[^/]+\/Safe$/, 'the record followed the folder into the trash');

    // A new folder at the old path is a plain one: a plain file goes in.
    assert.equal((await s.api('POST', '/api/files/mkdir', { token: admin, body: { path: '/Files/Safe' } })).status, 200);
    assert.equal(await plainUpload('/Files/Safe'), 200);
    await del('/Files/Safe');

    const restored = await s.api('POST', '/api/files/manager/restore', { token: admin, body: { id: item } });
    assert.equal(restored.status, 200, JSON.stringify(restored.body));
    assert.equal(restored.body.restored.length, 1, JSON.stringify(restored.body));
    assert.equal((await folders()).find((f) => f.id === id)?.path, '/Files/Safe');
    const rows = (await s.api('GET', '/api/files/manager?path=/Files/Safe', { token: admin })).body.entries;
    assert.deepEqual(
      rows.map((e: { name: string; encrypted?: boolean }) => [e.name, e.encrypted]),
      [[name, true]],
    );
    assert.equal(await plainUpload('/Files/Safe'), 422, 'encrypted again: plain names are refused');

    await del('/Files/Safe');
    const purged = await s.api('POST', '/api/files/trash/purge', { token: admin, body: { ids: [await trashId('Safe')] } });
    assert.equal(purged.status, 200, JSON.stringify(purged.body));
    assert.equal(await sqlRow(s.server.db, 'SELECT id FROM encrypted_folders WHERE id = ?', id), undefined);
    assert.equal(await sqlRow(s.server.db, 'SELECT folder_id FROM encrypted_folder_keys WHERE folder_id = ?', id), undefined);
    assert.equal(
      (await folders()).find((f) => f.id === id),
      undefined,
    );
  });

  test("a deleted storage's encrypted folders leave the roots index at once (a storage added after it under the same id is plain)", async () => {
    const dir = join(root, '..', `${root.split('/').pop()}-extra`);
    mkdirSync(dir, { recursive: true });
    const add = async (name: string) => {
      const r = await s.api('POST', '/api/admin/storages', { token: admin, body: { name, driver: 'local', config: { path: dir } } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.id as number;
    };
    const first = await add('Extra');
    const id = await makeEncryptedFolder(s, admin, '/Extra/Box');
    assert.equal((await s.api('DELETE', `/api/admin/storages/${first}`, { token: admin })).status, 200);
    assert.equal(
      (await folders()).find((f) => f.id === id),
      undefined,
      'no longer listed',
    );
    await add('Again');
    // The folder's bytes are still on disk (deleting a storage leaves its files): the new storage sees a plain Box.
    assert.equal(await plainUpload('/Again/Box'), 200);
    assert.equal(
      (await s.api('GET', '/api/files/manager?path=/Again/Box', { token: admin })).body.entries.some((e: { encrypted?: boolean }) => e.encrypted),
      false,
    );
  });
});
