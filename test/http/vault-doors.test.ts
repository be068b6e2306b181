/**
 * Every door of an encrypted folder on a real server (docs/vault.md, "Every door"): nothing in the clear goes
 * in (plain names and plaintext bytes refused with nothing visible or left on disk, by every write path),
 * nothing crosses the boundary, server work (thumbnails, text, scans, search) leaves it alone, the assistant's
 * tools (over MCP, the SDK's own client) answer ENCRYPTED, WebDAV hides it or shows its ciphertext read only,
 * and links to encrypted files show no name. Ciphertext is made by shape (test/helpers/vault.ts).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, uploadFile, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { sqlRow } from '../helpers/sql';
import { eicarDatabase } from '../helpers/clamav';
import { curl, PROPFIND_ALL } from '../gateways/webdav-helpers';
import { sftpBatch } from '../helpers/sftp-clients';
import { buildAppPackage, publisherKey } from '../helpers/app-package';
import { TOOLS_CODE, TOOLS_PACKS, toolsManifest } from '../helpers/tools-app';
import { encName, fdv1, makeEncryptedFolder, makeVault } from '../helpers/vault';

const missingClam = needTool('clamscan', 'clamav');
const missingSftp = needTool('sshpass', 'sshpass') ?? needTool('sftp', 'openssh-client');
const missingZip = needTool('zip', 'zip');

describe('encrypted folders at every door', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanupRoot: () => void;
  let alice: string;
  let bob: string;
  let vaultId: number;
  const V = '/Files/Users/alice/Vault';
  const disk = () => join(root, 'Users/alice/Vault');
  const list = (token: string, path: string) => s.api('GET', `/api/files/manager?path=${encodeURIComponent(path)}`, { token });
  const names = async (path: string) => (await list(alice, path)).body.entries.map((e: { name: string }) => e.name).sort();
  const upload = (token: string, folder: string, name: string, bytes: Buffer) => {
    const form = new FormData();
    form.append('path', folder);
    form.append('file', new Blob([new Uint8Array(bytes)]), name);
    return fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
  };
  /** The one encrypted subfolder the second test makes. */
  const theDir = async (): Promise<string> => (await list(alice, V)).body.entries.find((e: { type: string }) => e.type === 'dir').name;
  const leftovers = () => readdirSync(disk(), { recursive: true }).map(String).sort();

  before(async () => {
    ({ dir: root, cleanup: cleanupRoot } = tempDir('filedock-vault-doors-'));
    s = await startTestServer({
      SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
      SERVICE_DEFAULT_STORAGE_NAME: 'Files',
      SERVICE_DEFAULT_STORAGE_PATH: root,
      SERVICE_SFTP_LISTEN: '127.0.0.1:0',
    });
    admin = await s.login();
    for (const n of ['alice', 'bob']) {
      const r = await s.api('POST', '/api/admin/users', { token: admin, body: { email: `${n}@example.test`, username: n, password: 'person-pass-123' } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    alice = await s.login('alice@example.test', 'person-pass-123');
    bob = await s.login('bob@example.test', 'person-pass-123');
    await makeVault(s, alice);
    vaultId = await makeEncryptedFolder(s, alice, V);
    await uploadFile(s, alice, '/Files/Users/alice', 'plain.txt', Buffer.from('a plain file outside'));
  });
  after(async () => {
    await s?.close();
    cleanupRoot?.();
  });

  test('plain names and plaintext bytes are refused (422 not_encrypted) with nothing visible or left on disk', async () => {
    const plainBytes = await upload(alice, V, encName(), Buffer.from('hello in the clear, hello in the clear'));
    assert.equal(plainBytes.status, 422);
    assert.equal((await plainBytes.json()).error, 'not_encrypted');
    const plainName = await upload(alice, V, 'diary.txt', fdv1());
    assert.equal(plainName.status, 422);
    const mk = await s.api('POST', '/api/files/mkdir', { token: alice, body: { path: `${V}/Photos` } });
    assert.deepEqual([mk.status, mk.body.error], [422, 'not_encrypted']);
    // The resumable flow: a plain name is refused at init; plaintext under an encrypted name at finalize.
    const init = (name: string, size: number) => s.api('POST', '/api/files/upload/init', { token: alice, body: { path: `${V}/${name}`, size } });
    assert.equal((await init('notes.txt', 10)).status, 422);
    const bytes = Buffer.from('x'.repeat(5000));
    const up = await init(encName(), bytes.length);
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const part = await fetch(`${s.url}/api/files/upload/chunk?upload_id=${up.body.upload_id}&part=1`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/octet-stream' },
      body: new Uint8Array(bytes),
    });
    const etag = ((await part.json()) as { etag?: string }).etag;
    const fin = await s.api('POST', '/api/files/upload/finalize', { token: alice, body: { upload_id: up.body.upload_id, etags: [{ part: 1, etag }] } });
    assert.equal(part.status === 200 ? fin.status : part.status, 422, `${part.status} ${JSON.stringify(fin.body)}`);
    // A declared 10 GB upload is refused before anything is written.
    const huge = await init(encName(), 10 * 1024 ** 3);
    assert.equal(huge.status, 413);
    assert.deepEqual(await names(V), []);
    assert.deepEqual(leftovers(), [], 'nothing on the backend');
  });

  test('ciphertext under encrypted names goes in, and every row there says encrypted', async () => {
    const dir = encName();
    assert.equal((await s.api('POST', '/api/files/mkdir', { token: alice, body: { path: `${V}/${dir}` } })).status, 200);
    const file = encName();
    const r = await upload(alice, `${V}/${dir}`, file, fdv1(8192));
    assert.equal(r.status, 200, await r.text());
    const rows = (await list(alice, `${V}/${dir}`)).body.entries;
    assert.deepEqual(
      rows.map((e: { name: string; encrypted: boolean }) => [e.name, e.encrypted]),
      [[file, true]],
    );
    const top = (await list(alice, V)).body.entries[0];
    assert.deepEqual([top.name, top.encrypted, top.vault_folder_id], [dir, true, undefined]);
    // A key version the folder does not have yet is not a valid header.
    assert.equal((await upload(alice, V, encName(), fdv1(8192, 2))).status, 422);
  });

  test('copy and move across the boundary and renaming the root answer 409 encrypted; server-side edits 403', async () => {
    const dir = await theDir();
    const [file] = (await list(alice, `${V}/${dir}`)).body.entries.map((e: { name: string }) => e.name);
    const inside = `${V}/${dir}/${file}`;
    for (const [verb, from, to] of [
      ['copy', '/Files/Users/alice/plain.txt', `${V}/${encName()}`],
      ['move', '/Files/Users/alice/plain.txt', `${V}/${encName()}`],
      ['copy', inside, '/Files/Users/alice/out.bin'],
      ['move', inside, '/Files/Users/alice/out.bin'],
      ['move', V, '/Files/Users/alice/Elsewhere'],
    ]) {
      const r = await s.api('POST', `/api/files/${verb}`, { token: alice, body: { from, to } });
      assert.deepEqual([r.status, r.body.error], [409, 'encrypted'], `${verb} ${from} → ${to}`);
    }
    const ren = await s.api('POST', '/api/files/rename', { token: alice, body: { path: V, new_name: 'Open' } });
    assert.deepEqual([ren.status, ren.body.error], [409, 'encrypted']);
    // Within the folder, ciphertext moves freely.
    const moved = await s.api('POST', '/api/files/copy', { token: alice, body: { from: inside, to: `${V}/${encName()}` } });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    const save = await s.api('POST', '/api/files/save-text', { token: alice, body: { path: `${V}/${encName()}`, content: 'hello' } });
    assert.deepEqual([save.status, save.body.error], [403, 'encrypted']);
    const nf = await s.api('POST', '/api/files/manager?action=newfile', { token: alice, body: { path: V, name: encName(), type: 'txt' } });
    assert.deepEqual([nf.status, nf.body.error], [403, 'encrypted']);
    assert.ok(!(await names('/Files/Users/alice')).includes('out.bin'));
  });

  test('extracting an archive into an encrypted folder, or zipping one, answers 403 encrypted', { skip: missingZip ?? false }, async () => {
    const { dir: local, cleanup } = tempDir('filedock-vault-zip-');
    try {
      writeFileSync(join(local, 'inside.txt'), 'plaintext that must not land in the folder');
      execFileSync('zip', ['-q', join(local, 'a.zip'), 'inside.txt'], { cwd: local });
      await uploadFile(s, alice, '/Files/Users/alice', 'a.zip', readFileSync(join(local, 'a.zip')));
    } finally {
      cleanup();
    }
    const ex = await s.api('POST', '/api/files/archive/extract', { token: alice, body: { path: '/Files/Users/alice/a.zip', dest: V } });
    assert.deepEqual([ex.status, ex.body.error], [403, 'encrypted']);
    const add = await s.api('POST', '/api/files/archive/add', { token: alice, body: { paths: [V], dest: '/Files/Users/alice/v.zip' } });
    assert.deepEqual([add.status, add.body.error], [403, 'encrypted']);
    assert.ok(!(await theDir().then(() => names(V))).some((n: string) => n.includes('inside')));
  });

  test('a non-member, admins included, gets 403 encrypted; search never shows encrypted rows', async () => {
    for (const token of [admin, bob]) {
      const r = await list(token, V);
      assert.deepEqual([r.status, r.body.error], [403, 'encrypted']);
    }
    // API keys act as their owner: alice's key lists the folder, bob's and the admin's do not.
    const keyOf = async (token: string) => (await s.api('POST', '/api/auth/keys', { token, body: { name: 'k', verbs: ['files:read'] } })).body.token as string;
    assert.equal((await list(await keyOf(alice), V)).status, 200);
    for (const token of [bob, admin]) assert.equal((await list(await keyOf(token), V)).body.error, 'encrypted');
    const raw = await s.api('GET', `/api/files/raw?path=${encodeURIComponent(`${V}/x`)}`, { token: admin });
    assert.equal(raw.body.error, 'encrypted');
    const dir = await theDir();
    for (const token of [alice, admin]) {
      for (const q of [dir.slice(0, 12), 'Vault']) {
        const r = await s.api('GET', `/api/files/search?q=${q}`, { token });
        assert.equal(r.status, 200);
        assert.deepEqual(r.body.entries, [], `search ${q}`);
      }
    }
    const works = await s.api('GET', '/api/files/search?q=plain', { token: alice });
    assert.equal(works.body.entries.length, 1, `search itself works: ${JSON.stringify(works.body)}`);
  });

  test('no server thumbnail or text is made for encrypted files; the scan says skipped: encrypted', { skip: missingClam ?? false }, async () => {
    const db = eicarDatabase(root + '-clam');
    const p = await s.api('PATCH', '/api/admin/protection', { token: admin, body: { av_enabled: true, av_mode: 'binary', av_database: db } });
    assert.equal(p.status, 200, JSON.stringify(p.body));
    const name = encName();
    assert.equal((await upload(alice, V, name, fdv1(8192))).status, 200);
    const rel = `Users/alice/Vault/${name}`;
    let scan: any;
    for (let i = 0; i < 400 && !scan; i++) {
      scan = await sqlRow(s.server.db, 'SELECT * FROM av_scans WHERE path = ?', rel);
      if (!scan) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(scan, 'the scan ran');
    assert.equal(scan.state, 'skipped');
    assert.match(JSON.stringify(scan), /encrypted/);
    const node = await sqlRow(s.server.db, 'SELECT id, thumb_state FROM nodes WHERE path = ?', rel);
    assert.notEqual(node.thumb_state, 'pending');
    assert.notEqual(node.thumb_state, 'ready');
    assert.equal(await sqlRow(s.server.db, 'SELECT * FROM text_extracts WHERE node_id = ?', node.id), undefined);
    await s.api('PATCH', '/api/admin/protection', { token: admin, body: { av_enabled: false } });
  });

  test('encrypted thumbnails: FDV1 only, at most 256 KiB, for members', async () => {
    const dir = await theDir();
    const [file] = (await list(alice, `${V}/${dir}`)).body.entries.map((e: { name: string }) => e.name);
    const path = encodeURIComponent(`${V}/${dir}/${file}`);
    const put = (token: string, body: Buffer) =>
      fetch(`${s.url}/api/vault/thumb?path=${path}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
        body: new Uint8Array(body),
      });
    assert.equal((await put(alice, Buffer.from('RIFF....WEBPVP8 plain thumbnail'))).status, 422);
    assert.equal((await put(alice, fdv1(256 * 1024 + 1))).status, 413);
    const thumb = fdv1(3000);
    assert.equal((await put(alice, thumb)).status, 204);
    const got = await fetch(`${s.url}/api/vault/thumb?path=${path}`, { headers: { authorization: `Bearer ${alice}` } });
    assert.equal(got.status, 200);
    assert.ok(Buffer.from(await got.arrayBuffer()).equals(thumb));
    assert.equal((await fetch(`${s.url}/api/vault/thumb?path=${path}`, { headers: { authorization: `Bearer ${bob}` } })).status, 403);
  });

  test('links: a file link says encrypted and its page names nothing; folder links and file requests are refused', async () => {
    const dir = await theDir();
    const [file] = (await list(alice, `${V}/${dir}`)).body.entries.map((e: { name: string }) => e.name);
    const link = await s.api('POST', '/api/files/share', { token: alice, body: { path: `${V}/${dir}/${file}` } });
    assert.equal(link.status, 200, JSON.stringify(link.body));
    assert.equal(link.body.encrypted, true);
    const plain = await s.api('POST', '/api/files/share', { token: alice, body: { path: '/Files/Users/alice/plain.txt' } });
    assert.equal(plain.body.encrypted, undefined);
    for (const body of [{ path: V }, { path: `${V}/${dir}` }, { path: V, kind: 'drop' }]) {
      const r = await s.api('POST', '/api/files/share', { token: alice, body });
      assert.deepEqual([r.status, r.body.error], [409, 'encrypted'], JSON.stringify(body));
    }
    const token = link.body.token as string;
    const meta = await s.api('GET', `/api/files/share/${token}`);
    assert.deepEqual([meta.body.encrypted, meta.body.filename], [true, '']);
    const page = await fetch(`${s.url}/s/${token}`, { headers: { accept: 'text/html' } });
    const html = await page.text();
    assert.equal(page.status, 200);
    assert.ok(!html.includes(file), 'the ciphertext name is not on the page');
    assert.match(html, /<div id="vault-link" data-download="[^"]*dl=1" data-size="8192" data-strings="[^"]*"><\/div>/);
    assert.match(html, /<noscript>/);
    const card = await (await fetch(`${s.url}/s/${token}`, { headers: { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' } })).text();
    assert.match(card, /<meta property="og:title" content="Encrypted file">/);
    assert.ok(!card.includes(file));
    assert.ok(!card.includes('og:image'));
    // The ciphertext itself comes through the link's download address.
    const bytes = Buffer.from(await (await fetch(`${s.url}/s/${token}?dl=1`)).arrayBuffer());
    assert.equal(bytes.subarray(0, 4).toString('latin1'), 'FDV1');
  });

  test("the assistant's tools over MCP answer ENCRYPTED and drop encrypted rows", async () => {
    const k = await s.api('POST', '/api/auth/keys', { token: alice, body: { name: 'agent', verbs: ['files:read', 'files:write', 'ai.use'] } });
    assert.equal(k.status, 201, JSON.stringify(k.body));
    const c = new Client({ name: 'vault-test', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${k.body.token}` } } }));
    try {
      const text = (r: any) => (r.content as Array<{ text: string }>)[0].text;
      const dir = await theDir();
      for (const [name, args] of [
        ['list', { path: V }],
        ['read', { path: `${V}/${dir}` }],
        ['write_text', { path: `${V}/${encName()}`, content: 'x' }],
      ] as const) {
        const r: any = await c.callTool({ name, arguments: args });
        assert.equal(r.isError, true, name);
        assert.equal(JSON.parse(text(r)).error, 'ENCRYPTED', `${name}: ${text(r)}`);
      }
      const home: any = await c.callTool({ name: 'list', arguments: { path: '/Files/Users/alice' } });
      assert.ok(!text(home).includes('Vault'), 'the encrypted folder is not among the rows');
      assert.ok(text(home).includes('plain.txt'));
    } finally {
      await c.close();
    }
  });

  test('an app action on an encrypted file answers 403 encrypted, for a member too', async () => {
    const key = publisherKey('acme');
    const trust = await s.api('POST', '/api/admin/app-plugins/keys', { token: admin, body: { publisher: 'acme', public_key_pem: key.trusted.public_key_pem } });
    assert.equal(trust.status, 201, JSON.stringify(trust.body));
    const zip = await buildAppPackage({ key, manifest: toolsManifest([]), code: TOOLS_CODE, languages: TOOLS_PACKS });
    const inst = await s.api('POST', '/api/admin/app-plugins/apps', { token: admin, raw: new Uint8Array(zip), headers: { 'content-type': 'application/zip' } });
    assert.equal(inst.status, 201, JSON.stringify(inst.body));
    const dir = await theDir();
    const [file] = (await list(alice, `${V}/${dir}`)).body.entries.map((e: { name: string }) => e.name);
    const r = await s.api('POST', '/api/files/plugins/actions/tools/spin/run', { token: alice, body: { paths: [`${V}/${dir}/${file}`] } });
    assert.deepEqual([r.status, r.body.error], [403, 'encrypted']);
    const ok = await s.api('POST', '/api/files/plugins/actions/tools/greet/run', { token: alice, body: { paths: ['/Files/Users/alice/plain.txt'] } });
    assert.notEqual(ok.status, 403, 'the same app reaches a plain file');
  });

  test('WebDAV hides encrypted folders by default; with ciphertext set, members read them and nobody writes', async () => {
    const dav = s.url + '/dav';
    const user = 'alice:person-pass-123';
    const home = await curl(`${dav}/Files/Users/alice/`, { method: 'PROPFIND', user, headers: { depth: '1' }, body: PROPFIND_ALL });
    assert.equal(home.status, 207);
    assert.ok(home.body.includes('plain.txt'));
    assert.ok(!home.body.includes('Vault'));
    assert.equal((await curl(`${dav}/Files/Users/alice/Vault/`, { method: 'PROPFIND', user, headers: { depth: '1' }, body: PROPFIND_ALL })).status, 404);

    const set = await s.api('PATCH', '/api/admin/gateways/settings', { token: admin, body: { gateways_encrypted_folders: 'ciphertext' } });
    assert.deepEqual(set.body, { gateways_encrypted_folders: 'ciphertext' });
    const dir = await theDir();
    const inside = await curl(`${dav}/Files/Users/alice/Vault/`, { method: 'PROPFIND', user, headers: { depth: '1' }, body: PROPFIND_ALL });
    assert.equal(inside.status, 207);
    assert.ok(inside.body.includes(dir), 'members see the ciphertext names');
    const [file] = (await list(alice, `${V}/${dir}`)).body.entries.map((e: { name: string }) => e.name);
    const get = await curl(`${dav}/Files/Users/alice/Vault/${dir}/${file}`, { user });
    assert.equal(get.status, 200);
    assert.ok(get.body.startsWith('FDV1'));
    const put = await curl(`${dav}/Files/Users/alice/Vault/${encName()}`, { method: 'PUT', user, body: fdv1() });
    assert.equal(put.status, 403, 'read only');
    const byBob = await curl(`${dav}/Files/Users/alice/Vault/`, {
      method: 'PROPFIND',
      user: 'bob:person-pass-123',
      headers: { depth: '1' },
      body: PROPFIND_ALL,
    });
    assert.notEqual(byBob.status, 207);
    await s.api('PATCH', '/api/admin/gateways/settings', { token: admin, body: { gateways_encrypted_folders: 'hidden' } });
  });

  test('SFTP (OpenSSH) hides encrypted folders by default; with ciphertext set, members list them and cannot write', {
    skip: missingSftp ?? false,
  }, async () => {
    const g = s.server.services.gateways.registry.status().gateways.find((x) => x.protocol === 'sftp')!;
    const port = Number(g.listen!.split(':').at(-1));
    const batch = (commands: string[]) => sftpBatch(port, 'alice@example.test', 'person-pass-123', commands);
    const home = await batch(['ls -1 Files/Users/alice']);
    assert.equal(home.code, 0, home.stderr);
    assert.match(home.stdout, /plain\.txt/);
    assert.doesNotMatch(home.stdout, /Vault/);
    assert.notEqual((await batch(['ls -1 Files/Users/alice/Vault'])).code, 0);
    await s.api('PATCH', '/api/admin/gateways/settings', { token: admin, body: { gateways_encrypted_folders: 'ciphertext' } });
    try {
      const dir = await theDir();
      const inside = await batch(['ls -1 Files/Users/alice/Vault']);
      assert.equal(inside.code, 0, inside.stderr);
      assert.ok(inside.stdout.includes(dir));
      const { dir: local, cleanup } = tempDir('filedock-vault-sftp-');
      try {
        writeFileSync(join(local, 'c.bin'), fdv1());
        assert.notEqual((await batch([`put ${join(local, 'c.bin')} Files/Users/alice/Vault/${encName()}`])).code, 0, 'read only');
      } finally {
        cleanup();
      }
    } finally {
      await s.api('PATCH', '/api/admin/gateways/settings', { token: admin, body: { gateways_encrypted_folders: 'hidden' } });
    }
  });

  test('system work keeps ciphertext: a deleted encrypted file goes to the trash as it was', async () => {
    const name = encName();
    const bytes = fdv1(5000);
    assert.equal((await upload(alice, V, name, bytes)).status, 200);
    const del = await s.api('POST', '/api/files/delete', { token: alice, body: { paths: [`${V}/${name}`] } });
    assert.deepEqual(del.body.deleted, [`${V}/${name}`]);
    const row = await sqlRow(s.server.db, 'SELECT * FROM trash_items WHERE orig_path = ?', `Users/alice/Vault/${name}`);
    assert.ok(row, 'recorded in the trash');
    const trashDir = join(root, '.service-trash');
    const kept = readdirSync(trashDir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(name));
    assert.equal(kept.length, 1, 'the ciphertext is in the trash under its encrypted name');
    assert.ok(readFileSync(join(trashDir, kept[0])).equals(bytes), 'byte for byte');
    assert.ok(vaultId > 0);
  });
});
