import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, rmSync, existsSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { sqlRow, sqlValue } from '../helpers/sql';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('admin storages, sync runs and access', () => {
  let s: TestServer;
  let admin: string;
  let root: string;
  let cleanupRoot: () => void;
  const waitRun = async (runId: number) => {
    for (let i = 0; i < 400; i++) {
      const r = await s.api('GET', `/api/admin/sync/runs/${runId}`, { token: admin });
      if (r.body.status === 'completed' || r.body.status === 'failed') return r.body;
      await sleep(25);
    }
    throw new Error('sync did not finish');
  };
  const sync = async (id: number) => waitRun((await s.api('POST', `/api/admin/storages/${id}/sync`, { token: admin })).body.run_id);

  before(async () => {
    s = await startTestServer();
    admin = await s.login();
    ({ dir: root, cleanup: cleanupRoot } = tempDir('filedock-root-'));
    for (let d = 0; d < 5; d++) {
      mkdirSync(join(root, `dir ${d}`));
      for (let f = 0; f < 20; f++) writeFileSync(join(root, `dir ${d}`, `file #${f} ü.txt`), `content ${d}/${f}`);
    }
  });
  after(async () => {
    await s.close();
    cleanupRoot();
  });

  test('the driver descriptors drive the admin form', async () => {
    const r = await s.api('GET', '/api/admin/storage-drivers', { token: admin });
    assert.equal(r.status, 200);
    const local = r.body.find((d: { driver: string }) => d.driver === 'local');
    const path = local.fields.find((f: { key: string }) => f.key === 'path');
    assert.equal(path.root, true);
    assert.equal(path.required, true);
    assert.deepEqual(path.aliases, ['root']);
    assert.equal(typeof path.i18n_key, 'string');
    assert.equal(typeof local.capabilities.read, 'boolean');
    const caps = await s.api('GET', '/api/capabilities');
    assert.ok(caps.body.storage_drivers.includes('local'));
  });

  test('validation: unknown driver, non-object config, bad sync mode, root guard, name rules', async () => {
    const post = (body: unknown) => s.api('POST', '/api/admin/storages', { token: admin, body });
    assert.equal((await post({ name: 'X', driver: 'nfs', config: {} })).body.details.field, 'driver');
    assert.equal((await post({ name: 'X', driver: 'local', config: 'path=/tmp' })).body.details.field, 'config');
    assert.equal((await post({ name: 'X', driver: 'local', config: { path: root }, sync_mode: 'sometimes' })).body.details.field, 'sync_mode');
    const rootGuard = await post({ name: 'X', driver: 'local', config: { path: '/' } });
    assert.equal(rootGuard.status, 400);
    assert.equal(rootGuard.body.details.field, 'config.path');
    assert.equal((await post({ name: 'X', driver: 'local', config: { path: 'relative/dir' } })).body.details.field, 'config.path');
    assert.equal((await post({ name: 'X', driver: 'local', config: { path: `${root}/../etc` } })).status, 400);
    assert.equal((await post({ name: 'a/b', driver: 'local', config: { path: root } })).body.details.field, 'name');
    assert.equal((await post({ name: '.versions', driver: 'local', config: { path: root } })).body.details.field, 'name');
    assert.equal((await post({ driver: 'local', config: { path: root } })).body.details.field, 'name');
  });

  let id = 0;
  test('create, first sync, run detail; interval clamp and duration strings; legacy alias', async () => {
    // Polling: these tests count what full syncs find; a watcher (the local default) would apply the changes first.
    const r = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { rbac_enabled: false, name: 'Home', driver: 'local', config: { root }, sync_interval: '1h', readonly: false, sync_mode: 'poll' },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    id = r.body.id;
    assert.match(r.body.uid, /^st[0-9a-f]{16}$/);
    assert.equal(r.body.sync_interval_s, 3600);
    assert.equal(r.body.config.path, root, 'alias root → path');
    assert.equal(r.body.config_summary, root);
    // The first sync starts by itself; a manual one returns the live run or a new one.
    const run = await sync(id);
    assert.equal(run.status, 'completed');
    const nodes = (await sqlRow(s.server.db, 'SELECT count(*) AS n FROM nodes WHERE storage_id = ?', id)) as { n: number };
    assert.equal(nodes.n, 105);
    const list = await s.api('GET', '/api/admin/storages', { token: admin });
    assert.ok(list.body.storages[0].last_sync);
    const clamp = await s.api('PATCH', `/api/admin/storages/${id}`, { token: admin, body: { sync_interval_s: 2 } });
    assert.equal(clamp.body.sync_interval_s, 900);
    const runs = await s.api('GET', `/api/admin/sync/runs?storage_id=${id}`, { token: admin });
    assert.ok(runs.body.runs.length >= 1);
    assert.deepEqual(
      Object.keys(runs.body.runs[0]).filter((k) =>
        ['id', 'storage_id', 'status', 'started_at', 'finished_at', 'added', 'updated', 'removed', 'errors'].includes(k),
      ).length,
      9,
    );
  });

  test('re-sync picks up adds, changes and deletes', async () => {
    writeFileSync(join(root, 'dir 0', 'new.txt'), 'new');
    writeFileSync(join(root, 'dir 1', 'file #1 ü.txt'), 'changed and longer');
    unlinkSync(join(root, 'dir 2', 'file #2 ü.txt'));
    const run = await sync(id);
    assert.equal(run.added, 1);
    assert.equal(run.updated, 1);
    assert.equal(run.removed, 1);
  });

  test('tombstone guard: a run seeing under 70 % removes nothing', async () => {
    const moved = join(root, '..', 'filedock-aside-' + process.pid);
    mkdirSync(moved);
    for (const d of ['dir 1', 'dir 2', 'dir 3', 'dir 4']) {
      for (const f of readdirSync(join(root, d))) rmSync(join(root, d, f));
    }
    const run = await sync(id);
    assert.equal(run.status, 'completed');
    assert.equal(run.guard_tripped, true);
    assert.equal(run.removed, 0);
    const n = ((await sqlRow(s.server.db, 'SELECT count(*) AS n FROM nodes WHERE storage_id = ?', id)) as { n: number }).n;
    assert.ok(n > 100, `rows kept (${n})`);
    rmSync(moved, { recursive: true });
  });

  test('a missing root records an errored run and removes nothing', async () => {
    const { dir: gone, cleanup } = tempDir('filedock-gone-');
    writeFileSync(join(gone, 'a.txt'), 'a');
    const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Gone', driver: 'local', config: { path: gone } } });
    const first = await sync(st.body.id);
    assert.equal(first.status, 'completed');
    cleanup();
    assert.equal(existsSync(gone), false);
    const run = await sync(st.body.id);
    assert.equal(run.status, 'failed');
    assert.ok(run.error_details.length >= 1);
    assert.match(run.error_details[0].message, /./);
    const n = ((await sqlRow(s.server.db, 'SELECT count(*) AS n FROM nodes WHERE storage_id = ?', st.body.id)) as { n: number }).n;
    assert.equal(n, 1, 'cache rows kept');
    const view = await s.api('GET', `/api/admin/storages/${st.body.id}`, { token: admin });
    assert.equal(view.body.status, 'offline');
    await s.api('DELETE', `/api/admin/storages/${st.body.id}`, { token: admin });
  });

  test('test endpoint: unsaved and saved, driver error verbatim', async () => {
    const ok = await s.api('POST', '/api/admin/storages/test', { token: admin, body: { driver: 'local', config: { path: root } } });
    assert.equal(ok.body.ok, true);
    assert.ok(ok.body.sample_listing.includes('dir 0'));
    assert.equal(ok.body.object_count, 5);
    const saved = await s.api('POST', `/api/admin/storages/${id}/test`, { token: admin, body: {} });
    assert.equal(saved.body.ok, true);
    const { dir: f, cleanup } = tempDir();
    writeFileSync(join(f, 'file'), 'x');
    // A config the driver refuses is a field error; unreachable backends answer {ok: false} (see the remote driver tests).
    const bad = await s.api('POST', '/api/admin/storages/test', { token: admin, body: { driver: 'local', config: { path: join(f, 'file') } } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.details.field, 'path');
    cleanup();
  });

  test('rename keeps the uid; read_only; grants gate rbac storages; quota', async () => {
    const before = (await s.api('GET', `/api/admin/storages/${id}`, { token: admin })).body;
    const renamed = await s.api('PUT', `/api/admin/storages/${id}`, { token: admin, body: { name: 'House', read_only: true } });
    assert.equal(renamed.body.name, 'House');
    assert.equal(renamed.body.uid, before.uid);
    assert.equal(renamed.body.readonly, true);
    const dup = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'house', driver: 'local', config: { path: root } } });
    assert.equal(dup.body.error, 'name_taken');

    await s.api('POST', '/api/admin/users', { token: admin, body: { email: 'u@example.test', username: 'u1', password: 'user-password' } });
    const user = await s.login('u1', 'user-password');
    let q = await s.api('GET', '/api/files/quota/storages', { token: user });
    assert.deepEqual(
      q.body.storages.map((x: { name: string }) => x.name),
      ['House'],
    );
    assert.ok(q.body.storages[0].used_bytes > 0);
    await s.api('PATCH', `/api/admin/storages/${id}`, { token: admin, body: { rbac_enabled: true } });
    q = await s.api('GET', '/api/files/quota/storages', { token: user });
    assert.deepEqual(q.body.storages, []);
    const g = await s.api('PUT', `/api/admin/storages/${id}/grants`, { token: admin, body: { grants: [{ group: 'family', level: 'viewer' }] } });
    assert.equal(g.body.grants.length, 1);
    const uid = (await s.api('GET', '/api/admin/users?q=u1', { token: admin })).body.users[0].id;
    await s.api('PUT', `/api/admin/users/${uid}`, { token: admin, body: { groups: ['family'] } });
    q = await s.api('GET', '/api/files/quota/storages', { token: user });
    assert.deepEqual(
      q.body.storages.map((x: { name: string }) => x.name),
      ['House'],
    );
    const bad = await s.api('PUT', `/api/admin/storages/${id}/grants`, { token: admin, body: { grants: [{ level: 'owner' }] } });
    assert.equal(bad.status, 400);
    const me = await s.api('GET', '/api/files/quota/me', { token: user });
    assert.equal(me.body.used_bytes, 0);
  });

  test('secrets are never read back; delete removes cache rows, never files; audited', async () => {
    const del = await s.api('DELETE', `/api/admin/storages/${id}`, { token: admin });
    assert.equal(del.status, 200);
    assert.equal(((await sqlRow(s.server.db, 'SELECT count(*) AS n FROM nodes WHERE storage_id = ?', id)) as { n: number }).n, 0);
    assert.ok(existsSync(join(root, 'dir 0', 'new.txt')));
    const actions = (await s.api('GET', '/api/admin/audit?action=storage.', { token: admin })).body.events.map((e: { action: string }) => e.action);
    assert.ok(actions.includes('storage.add'));
    assert.ok(actions.includes('storage.delete'));
    assert.equal((await s.api('GET', `/api/admin/storages/${id}`, { token: admin })).status, 404);
  });

  test('two saves of the same storage at once both land, one after the other; the service shows what is stored', async () => {
    const st = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Twice', driver: 'local', config: { path: root } } });
    const [a, b] = await Promise.all([
      s.api('PATCH', `/api/admin/storages/${st.body.id}`, { token: admin, body: { name: 'Twice A' } }),
      s.api('PATCH', `/api/admin/storages/${st.body.id}`, { token: admin, body: { name: 'Twice B' } }),
    ]);
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    // Which of two requests in flight at once reaches the service first is not theirs to say; the one applied
    // last is what the row holds, and the service's copy of the storages must show the same.
    const stored = await sqlValue(s.server.db, 'SELECT name FROM storages WHERE id = ?', st.body.id);
    assert.ok(['Twice A', 'Twice B'].includes(stored), stored);
    assert.equal((await s.api('GET', `/api/admin/storages/${st.body.id}`, { token: admin })).body.name, stored);
  });

  test('three creates of one name at once: one is created, the others answer 409 name_taken', async () => {
    const create = () => s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Raced', driver: 'local', config: { path: root } } });
    const got = await Promise.all([create(), create(), create()]);
    assert.deepEqual(got.map((r) => r.status).sort(), [200, 409, 409], JSON.stringify(got.map((r) => r.body)));
    assert.ok(got.filter((r) => r.status === 409).every((r) => r.body.error === 'name_taken'));
    const list = (await s.api('GET', '/api/admin/storages', { token: admin })).body.storages;
    assert.equal(list.filter((x: { name: string }) => x.name === 'Raced').length, 1);
  });

  test("the root guard across tenants: a root at, inside or above another tenant's storage is refused, its own tenant's is not", async () => {
    const { dir, cleanup } = tempDir('filedock-tenant-root-');
    try {
      const post = (name: string, path: string) => s.api('POST', '/api/admin/storages', { token: admin, body: { name, driver: 'local', config: { path } } });
      mkdirSync(join(dir, 'other', 'inner'), { recursive: true });
      const other = await post('Other tenant', join(dir, 'other'));
      assert.equal(other.status, 200, JSON.stringify(other.body));
      const mine = await post('Same tenant', join(dir, 'other', 'inner'));
      assert.equal(mine.status, 200, 'nested in its own tenant: allowed as before');
      await s.api('DELETE', `/api/admin/storages/${mine.body.id}`, { token: admin });
      // Step 2 makes storages in other tenants; until then one is moved there directly.
      await s.server.db.async.sql('UPDATE storages SET tenant_id = 2 WHERE id = ?', [other.body.id]);
      await s.server.catalogue.repo.load();
      for (const path of [join(dir, 'other'), join(dir, 'other', 'inner'), dir]) {
        const r = await post('Nested', path);
        assert.deepEqual([r.status, r.body.details?.field], [400, 'config.path'], path);
      }
      const url = `/api/admin/storages/${other.body.id}`;
      assert.equal((await s.api('GET', url, { token: admin })).status, 404, "another tenant's storage is not found by its id");
      assert.equal((await s.api('DELETE', url, { token: admin })).status, 404, 'nor deleted');
      assert.ok(!(await s.api('GET', '/api/admin/storages', { token: admin })).body.storages.some((x: { id: number }) => x.id === other.body.id), 'nor listed');
      await s.server.catalogue.storages.delete({ tenant_id: 2 }, other.body.id);
    } finally {
      cleanup();
    }
  });

  test("tenants: another tenant's sync run is neither found by its id nor listed; moved back, it is", async () => {
    const { dir, cleanup } = tempDir('filedock-tenant-runs-');
    try {
      writeFileSync(join(dir, 'a.txt'), 'a');
      const made = await s.api('POST', '/api/admin/storages', { token: admin, body: { name: 'Runs elsewhere', driver: 'local', config: { path: dir } } });
      assert.equal(made.status, 200, JSON.stringify(made.body));
      const run = await sync(made.body.id);
      const listed = async () =>
        ((await s.api('GET', `/api/admin/sync/runs?storage_id=${made.body.id}`, { token: admin })).body.runs as Array<{ id: number }>).some(
          (r) => r.id === run.id,
        );
      assert.ok(await listed());
      // Step 2 makes storages in other tenants; until then one is moved there with its runs, as a child carries its storage's tenant.
      const move = async (tenant: number) => {
        await s.server.db.async.sql('UPDATE storages SET tenant_id = ? WHERE id = ?', [tenant, made.body.id]);
        await s.server.db.async.sql('UPDATE sync_runs SET tenant_id = ? WHERE storage_id = ?', [tenant, made.body.id]);
        await s.server.catalogue.repo.load();
      };
      await move(2);
      const one = await s.api('GET', `/api/admin/sync/runs/${run.id}`, { token: admin });
      assert.deepEqual([one.status, one.body.error], [404, 'not_found'], 'another tenant’s run answers like a missing one');
      assert.equal(await listed(), false, 'nor listed');
      await move(1);
      assert.equal((await s.api('GET', `/api/admin/sync/runs/${run.id}`, { token: admin })).status, 200);
      assert.ok(await listed());
      assert.equal((await s.api('DELETE', `/api/admin/storages/${made.body.id}`, { token: admin })).status, 200);
    } finally {
      cleanup();
    }
  });
});

describe('first-boot seeding and fsnotify', () => {
  test('SERVICE_DEFAULT_STORAGE_* seeds one local storage once; fsnotify picks up a new file', async () => {
    const { dir, cleanup } = tempDir('filedock-seed-');
    const s = await startTestServer({
      SERVICE_DEFAULT_STORAGE_DRIVER: 'local',
      SERVICE_DEFAULT_STORAGE_NAME: 'Filedock',
      SERVICE_DEFAULT_STORAGE_PATH: join(dir, 'Filedock'),
      SERVICE_DEFAULT_STORAGE_CONFIG: '',
    });
    try {
      const admin = await s.login();
      const list = await s.api('GET', '/api/admin/storages', { token: admin });
      assert.equal(list.body.storages.length, 1);
      const st = list.body.storages[0];
      assert.equal(st.name, 'Filedock');
      assert.ok(existsSync(join(dir, 'Filedock')), 'created with mode 0755');
      await s.api('PATCH', `/api/admin/storages/${st.id}`, { token: admin, body: { sync_mode: 'fsnotify' } });
      await sleep(300);
      writeFileSync(join(dir, 'Filedock', 'dropped in.txt'), 'hello');
      let row;
      for (let i = 0; i < 100 && !row; i++) {
        await sleep(50);
        row = await s.server.catalogue.nodes.get(s.server.catalogue.storageOf(st.id), 'dropped in.txt');
      }
      assert.ok(row, 'the watcher revalidated the folder');
      assert.equal(row!.size, 5);
    } finally {
      await s.close();
      cleanup();
    }
  });
});
