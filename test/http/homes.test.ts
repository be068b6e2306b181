/**
 * Private by default (issue 39, item 2): a fresh installation's default storage
 * starts closed; every new person gets a home folder `Users/<name>` with an
 * editor grant on it alone, whichever door created them (admin, sign-up, CLI);
 * they see only their home (and what is shared with them), cannot write
 * elsewhere (403 `forbidden`), and search never reaches the rest of the storage.
 * A storage created through the admin API starts closed too.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, uploadFile, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { SERVICE_CLI } from '../helpers/child-server';

describe('home folders and storages that start closed', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanupRoot: () => void;
  const names = (r: { body: { entries: Array<{ name: string }> } }) => r.body.entries.map((e) => e.name).sort();
  const list = (token: string, path: string) => s.api('GET', `/api/files/manager?path=${encodeURIComponent(path)}`, { token });
  const addUser = async (email: string, username?: string) => {
    const r = await s.api('POST', '/api/admin/users', { token: admin, body: { email, username, password: 'person-pass-123' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return { id: r.body.user.id as number, token: await s.login(email, 'person-pass-123') };
  };

  before(async () => {
    ({ dir: root, cleanup: cleanupRoot } = tempDir('filedock-homes-'));
    writeFileSync(join(root, 'family.txt'), 'the family budget');
    // A folder left by a former person: a new "bob" must not inherit it.
    mkdirSync(join(root, 'Users', 'bob'), { recursive: true });
    writeFileSync(join(root, 'Users', 'bob', 'old.txt'), 'not yours');
    s = await startTestServer({ SERVICE_DEFAULT_STORAGE_DRIVER: 'local', SERVICE_DEFAULT_STORAGE_NAME: 'Files', SERVICE_DEFAULT_STORAGE_PATH: root });
    admin = await s.login();
  });
  after(async () => {
    await s?.close();
    cleanupRoot?.();
  });

  test('the seeded default storage starts with access control on; the homes setting names it', async () => {
    const st = await s.api('GET', '/api/admin/storages', { token: admin });
    assert.equal(st.body.storages.length, 1);
    assert.equal(st.body.storages[0].rbac_enabled, true);
    const h = await s.api('GET', '/api/admin/homes', { token: admin });
    assert.equal(h.status, 200);
    assert.deepEqual(h.body, { enabled: true, storage_id: null, folder: 'Users', effective_storage: { id: st.body.storages[0].id, name: 'Files' } });
  });

  test('a person added in Admin → Users sees only their home and cannot write elsewhere', async () => {
    const alice = await addUser('alice@example.test', 'alice');
    assert.ok(existsSync(join(root, 'Users', 'alice')), 'the home folder is made on the storage');
    const me = await s.api('GET', '/api/auth/me', { token: alice.token });
    assert.equal(me.body.user.home, '/Files/Users/alice');

    assert.deepEqual(names(await list(alice.token, '/')), ['Files']);
    assert.deepEqual(names(await list(alice.token, '/Files')), ['Users'], 'the storage root shows only the way home');
    assert.deepEqual(names(await list(alice.token, '/Files/Users')), ['alice'], 'no other home is listed');
    const home = await list(alice.token, '/Files/Users/alice');
    assert.equal(home.status, 200);

    // Writes outside the home: the spec's storage-level refusal.
    for (const path of ['/Files/mine', '/Files/Users/evil']) {
      const r = await s.api('POST', '/api/files/mkdir', { token: alice.token, body: { path } });
      assert.equal(r.status, 403, path);
      assert.equal(r.body.error, 'forbidden');
    }
    const del = await s.api('POST', '/api/files/delete', { token: alice.token, body: { paths: ['/Files/family.txt'] } });
    assert.deepEqual(del.body.deleted, []);
    assert.equal(del.body.failed[0].error, 'forbidden');
    assert.ok(existsSync(join(root, 'family.txt')));
    const form = new FormData();
    form.append('path', '/Files');
    form.append('file', new Blob(['x']), 'x.txt');
    const up = await fetch(`${s.url}/api/files/upload`, { method: 'POST', body: form, headers: { authorization: `Bearer ${alice.token}` } });
    assert.equal(up.status, 403);
    assert.equal(((await up.json()) as { error: string }).error, 'forbidden');
    assert.ok(!existsSync(join(root, 'x.txt')));

    // Reads outside the home are refused the same way, whether the path exists or not.
    for (const p of ['/Files/family.txt', '/Files/nothing-here.txt', '/Files/Users/bob/old.txt']) {
      const raw = await s.api('GET', `/api/files/raw?path=${encodeURIComponent(p)}`, { token: alice.token });
      assert.equal(raw.status, 403, p);
      assert.equal(raw.body.error, 'forbidden');
    }
    assert.equal((await list(alice.token, '/Files/Users/bob')).status, 403);

    // Inside the home: a person's own files.
    assert.equal((await s.api('POST', '/api/files/mkdir', { token: alice.token, body: { path: '/Files/Users/alice/Photos' } })).status, 200);
    await uploadFile(s, alice.token, '/Files/Users/alice', 'family-notes.txt', Buffer.from('mine'));
    assert.deepEqual(names(await list(alice.token, '/Files/Users/alice')), ['Photos', 'family-notes.txt']);

    // Search never reaches the rest of the storage, from the top or from the storage root.
    for (const scope of ['', '&path=/Files', '&path=/Files/Users/alice']) {
      const found = await s.api('GET', `/api/files/search?q=family${scope}`, { token: alice.token });
      assert.equal(found.status, 200, scope);
      assert.deepEqual(
        found.body.entries.map((e: { path: string }) => e.path),
        ['/Files/Users/alice/family-notes.txt'],
        scope,
      );
    }
    // The storage is not the person's to count.
    const quota = await s.api('GET', '/api/files/quota/storages', { token: alice.token });
    assert.deepEqual(quota.body.storages, []);
    // The admin sees everything, homes included.
    assert.deepEqual(names(await list(admin, '/Files')), ['Users', 'family.txt']);
    assert.deepEqual(names(await list(admin, '/Files/Users')), ['alice', 'bob']);
  });

  test('sign-up makes a home too; a name whose folder exists gets a free one; odd names are made safe', async () => {
    assert.equal((await s.api('PATCH', '/api/admin/auth/settings', { token: admin, body: { allow_signup: true } })).status, 200);
    const r = await s.api('POST', '/api/auth/signup', { body: { email: 'bob@example.test', username: 'bob', password: 'person-pass-123' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const bob = r.body.token as string;
    const me = await s.api('GET', '/api/auth/me', { token: bob });
    assert.equal(me.body.user.home, '/Files/Users/bob-2', "the former person's folder is not handed over");
    assert.deepEqual(names(await list(bob, '/Files/Users')), ['bob-2']);
    assert.equal((await s.api('GET', `/api/files/raw?path=${encodeURIComponent('/Files/Users/bob/old.txt')}`, { token: bob })).status, 403);

    // `..` is a valid username but never a folder name.
    const dots = await addUser('dots@example.test', '..');
    const home = (await s.api('GET', '/api/auth/me', { token: dots.token })).body.user.home;
    assert.equal(home, `/Files/Users/user-${dots.id}`);
    assert.ok(existsSync(join(root, 'Users', `user-${dots.id}`)));
  });

  test('the live folder stream: a folder passed through on the way home subscribes to nothing; the home itself does', async () => {
    const gus = await addUser('gus@example.test', 'gus');
    // The first frame of the stream says whether the folder was subscribed (realtime.routes.ts).
    const ready = async (folder: string) => {
      const ac = new AbortController();
      const r = await fetch(`${s.url}/api/events/stream?folder=${encodeURIComponent(folder)}`, {
        headers: { authorization: `Bearer ${gus.token}` },
        signal: ac.signal,
      });
      try {
        if (r.status !== 200) return { status: r.status, subscribed: undefined };
        const reader = r.body!.getReader();
        let text = '';
        while (!/event: ready\ndata: .*\n/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
        return { status: r.status, subscribed: JSON.parse(/event: ready\ndata: (.*)\n/.exec(text)![1]).subscribed as boolean };
      } finally {
        ac.abort();
      }
    };
    // The web UI opens the stream for every folder it shows; the storage root must not answer 403 (a console error).
    assert.deepEqual(await ready('/Files'), { status: 200, subscribed: false });
    assert.deepEqual(await ready('/Files/Users'), { status: 200, subscribed: false });
    assert.deepEqual(await ready('/Files/Users/gus'), { status: 200, subscribed: true });
    assert.equal((await ready('/Files/Users/alice')).status, 403);
  });

  test('a storage made closed (as the admin UI, the CLI and set-up make them) is for the admin alone; the API keeps the spec default', async () => {
    const { dir, cleanup } = tempDir('filedock-homes-b-');
    try {
      writeFileSync(join(dir, 'secret.txt'), 's');
      // The spec's table: rbac_enabled defaults to false for an API client that leaves it out.
      const open = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Open', driver: 'local', config: { path: dir } } });
      assert.equal(open.status, 200);
      assert.equal(open.body.rbac_enabled, false);
      assert.equal((await s.api('DELETE', `/api/admin/storages/${open.body.id}`, { token: admin })).status, 200);
      const c = await s.api('POST', '/api/admin/storages', {
        token: admin,
        body: { name: 'Second', driver: 'local', config: { path: dir }, rbac_enabled: true },
      });
      assert.equal(c.status, 200);
      assert.equal(c.body.rbac_enabled, true);
      const carol = await addUser('carol@example.test', 'carol');
      assert.deepEqual(names(await list(carol.token, '/')), ['Files']);
      assert.equal((await list(carol.token, '/Second')).status, 404);
      // A grant opens it, as before.
      const g = await s.api('PUT', `/api/admin/storages/${c.body.id}/grants`, { token: admin, body: { grants: [{ user_id: carol.id, level: 'viewer' }] } });
      assert.equal(g.status, 200);
      // The storage's first sync may still be running on a loaded machine (a web listing waits 300 ms for a new folder).
      let seen: string[] = [];
      for (const end = Date.now() + 15_000; Date.now() < end && seen.length === 0; await new Promise((r) => setTimeout(r, 200)))
        seen = names(await list(carol.token, '/Second'));
      assert.deepEqual(seen, ['secret.txt']);
      // Replacing the storage-wide grants leaves the home grants alone.
      const files = (await s.api('GET', '/api/admin/storages', { token: admin })).body.storages.find((x: { name: string }) => x.name === 'Files');
      assert.equal((await s.api('PUT', `/api/admin/storages/${files.id}/grants`, { token: admin, body: { grants: [] } })).status, 200);
      assert.equal((await list(carol.token, '/Files/Users/carol')).status, 200);
      await s.api('DELETE', `/api/admin/storages/${c.body.id}`, { token: admin });
    } finally {
      cleanup();
    }
  });

  test('the home setting: another folder, off', async () => {
    const bad = await s.api('PATCH', '/api/admin/homes', { token: admin, body: { folder: '../out' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.details.field, 'folder');
    assert.equal((await s.api('PATCH', '/api/admin/homes', { token: admin, body: { folder: 'People' } })).body.folder, 'People');
    const dan = await addUser('dan@example.test', 'dan');
    assert.equal((await s.api('GET', '/api/auth/me', { token: dan.token })).body.user.home, '/Files/People/dan');
    assert.equal((await s.api('PATCH', '/api/admin/homes', { token: admin, body: { enabled: false } })).body.enabled, false);
    const eve = await addUser('eve@example.test', 'eve');
    assert.equal((await s.api('GET', '/api/auth/me', { token: eve.token })).body.user.home, null);
    assert.deepEqual(names(await list(eve.token, '/')), [], 'no home, nothing shared: nothing to see');
    await s.api('PATCH', '/api/admin/homes', { token: admin, body: { enabled: true, folder: 'Users' } });
  });
});

describe('home folders from the command line', () => {
  test('`service user add` makes the home on the storage added before', () => {
    const { dir, cleanup } = tempDir('filedock-homes-cli-');
    const run = (args: string[]) =>
      spawnSync(process.execPath, [...SERVICE_CLI, ...args], {
        env: { ...process.env, SERVICE_UPDATE_CHECK: '0', SERVICE_DATA_DIR: dir },
        encoding: 'utf8',
        timeout: 60_000,
      });
    try {
      const files = join(dir, 'files');
      mkdirSync(files);
      const st = run(['storage', 'add', '--name', 'Disk', '--driver', 'local', '--config', JSON.stringify({ path: files })]);
      assert.equal(st.status, 0, st.stderr);
      const add = run(['user', 'add', '--email', 'fay@example.test', '--username', 'fay', '--password', 'person-pass-123']);
      assert.equal(add.status, 0, add.stderr);
      assert.ok(existsSync(join(files, 'Users', 'fay')), 'the home folder is made by the CLI too');
    } finally {
      cleanup();
    }
  });
});
