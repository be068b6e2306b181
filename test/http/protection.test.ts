import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rmSync, existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, uploadFile, type TestServer } from '../helpers/server';
import { needTool, tempDir } from '../helpers/tools';
import { EICAR, EICAR_SIGNATURE, eicarDatabase, startClamd, type Clamd } from '../helpers/clamav';
import { sqlRow, sqlRows, sqlValue } from '../helpers/sql';

const skip = needTool('clamscan', 'clamav') ?? needTool('clamd', 'clamav-daemon') ?? undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('protection: trash, versions, antivirus, admin settings', { skip }, () => {
  let s: TestServer;
  let admin: string;
  let viewer: string;
  let root: string;
  let avDir: string;
  let clamd: Clamd | null = null;
  const cleanups: Array<() => void> = [];

  before(async () => {
    let c;
    ({ dir: root, cleanup: c } = tempDir('filedock-prot-'));
    cleanups.push(c);
    ({ dir: avDir, cleanup: c } = tempDir('filedock-av-'));
    cleanups.push(c);
    s = await startTestServer();
    admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { rbac_enabled: false, name: 'Docs', driver: 'local', config: { path: root } },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    const u = await s.api('POST', '/api/admin/users', {
      token: admin,
      body: { email: 'v@example.test', username: 'v1', password: 'viewer-password-1', role: 'viewer' },
    });
    assert.equal(u.status, 200, JSON.stringify(u.body));
    viewer = await s.login('v@example.test', 'viewer-password-1');
  });
  after(async () => {
    await clamd?.stop();
    await s.close();
    for (const c of cleanups) c();
  });

  const save = (path: string, content: string) => s.api('POST', '/api/files/save-text', { token: admin, body: { path, content } });
  const names = async (path: string) =>
    (await s.api('GET', `/api/files/manager?path=${encodeURIComponent(path)}`, { token: admin })).body.entries.map((e: any) => e.name);
  const upload = (folder: string, name: string, bytes: Buffer) => uploadFile(s, admin, folder, name, bytes);
  const patch = (body: unknown, token = admin) => s.api('PATCH', '/api/admin/protection', { token, body });
  const scanRow = async (path: string) => (await sqlRow(s.server.db, 'SELECT * FROM av_scans WHERE path = ?', path)) as any;
  const scanOps = async (path: string) =>
    ((await sqlRows(s.server.db, "SELECT * FROM ops WHERE kind = 'av.scan'")) as any[]).filter((o) => JSON.parse(o.payload).path === path);

  test('delete moves into .service-trash (hidden), the trash lists it with its deleter, restore brings it back', async () => {
    await s.api('POST', '/api/files/mkdir', { token: admin, body: { path: '/Docs/notes' } });
    assert.equal((await save('/Docs/notes/a.txt', 'first')).status, 200);
    const del = await s.api('POST', '/api/files/delete', { token: admin, body: { paths: ['/Docs/notes/a.txt'] } });
    assert.deepEqual(del.body, { deleted: ['/Docs/notes/a.txt'], failed: [], permanent: [] });
    assert.ok(!existsSync(join(root, 'notes/a.txt')));
    assert.ok(existsSync(join(root, '.service-trash')));
    assert.deepEqual(await names('/Docs/notes'), []);
    assert.ok(!(await names('/Docs')).includes('.service-trash'));
    assert.equal((await s.api('GET', '/api/files/search?q=a.txt', { token: admin })).body.entries.length, 0);
    const list = await s.api('GET', '/api/files/trash', { token: admin });
    assert.equal(list.status, 200);
    const item = list.body.items.find((i: any) => i.path === '/Docs/notes/a.txt');
    assert.equal(item.deleted_by, 'admin@example.test');
    assert.equal(item.reason, 'delete');
    assert.equal((await s.api('GET', '/api/files/trash', { token: viewer })).body.items.length, 0, 'a viewer cannot see the trash');
    const res = await s.api('POST', '/api/files/manager/restore', { token: admin, body: { id: item.id } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(readFileSync(join(root, 'notes/a.txt'), 'utf8'), 'first');
    assert.deepEqual(await names('/Docs/notes'), ['a.txt']);
    assert.ok(!(await s.api('GET', '/api/files/trash', { token: admin })).body.items.some((i: any) => i.id === item.id));
  });

  test('restore onto a name that exists again is name_taken; the item stays in the trash', async () => {
    await save('/Docs/b.txt', 'old b');
    await s.api('POST', '/api/files/delete', { token: admin, body: { paths: ['/Docs/b.txt'] } });
    await save('/Docs/b.txt', 'new b');
    const item = (await s.api('GET', '/api/files/trash', { token: admin })).body.items.find((i: any) => i.path === '/Docs/b.txt');
    const one = await s.api('POST', '/api/files/manager/restore', { token: admin, body: { id: item.id } });
    assert.equal(one.status, 409);
    assert.equal(one.body.error, 'name_taken');
    const bulk = await s.api('POST', '/api/files/manager/restore', { token: admin, body: { ids: [item.id, 999999] } });
    assert.deepEqual(bulk.body.failed, [
      { id: item.id, error: 'name_taken' },
      { id: 999999, error: 'not_found' },
    ]);
    assert.equal(readFileSync(join(root, 'b.txt'), 'utf8'), 'new b');
  });

  test('a deleted folder comes back whole; trash/same finds equal content; purge deletes for good; retention sweeps', async () => {
    mkdirSync(join(root, 'proj/sub'), { recursive: true });
    writeFileSync(join(root, 'proj/sub/deep.txt'), 'deep content');
    writeFileSync(join(root, 'proj/top.txt'), 'top');
    await s.api('POST', `/api/admin/storages/${(await s.api('GET', '/api/admin/storages', { token: admin })).body.storages[0].id}/sync`, { token: admin });
    await s.server.queue.idle(10_000);
    await s.api('POST', '/api/files/delete', { token: admin, body: { paths: ['/Docs/proj'] } });
    const item = (await s.api('GET', '/api/files/trash', { token: admin })).body.items.find((i: any) => i.path === '/Docs/proj');
    assert.equal(item.type, 'dir');
    const sha = createHash('sha256').update('old b').digest('hex');
    const same = await s.api('POST', '/api/files/manager/trash/same', { token: admin, body: { sha256: sha } });
    assert.deepEqual(
      same.body.items.map((i: any) => i.path),
      ['/Docs/b.txt'],
    );
    await save('/Docs/copy-of-b.txt', 'old b');
    const byEntry = await s.api('POST', '/api/files/manager/trash/same', { token: admin, body: { entries: ['/Docs/copy-of-b.txt'] } });
    assert.deepEqual(
      byEntry.body.items.map((i: any) => i.path),
      ['/Docs/b.txt'],
    );
    assert.equal((await s.api('POST', '/api/files/manager/trash/same', { token: admin, body: { sha256: 'ABC' } })).status, 400);
    const res = await s.api('POST', '/api/files/manager/restore', { token: admin, body: { ids: [item.id] } });
    assert.deepEqual(res.body.restored, [{ id: item.id, path: '/Docs/proj' }]);
    assert.equal(readFileSync(join(root, 'proj/sub/deep.txt'), 'utf8'), 'deep content');
    assert.deepEqual(await names('/Docs/proj/sub'), ['deep.txt']);
    const b = (await s.api('GET', '/api/files/trash', { token: admin })).body.items.find((i: any) => i.path === '/Docs/b.txt');
    const purged = await s.api('POST', '/api/files/trash/purge', { token: admin, body: { ids: [b.id] } });
    assert.deepEqual(purged.body, { purged: [b.id], failed: [] });
    assert.equal(readdirSync(join(root, '.service-trash')).length, 0);
    await save('/Docs/old.txt', 'x');
    await s.api('POST', '/api/files/delete', { token: admin, body: { paths: ['/Docs/old.txt'] } });
    assert.equal(await s.server.protection.trash.sweep(Date.now() + 29 * 86_400_000), 0, 'within 30 days nothing goes');
    assert.equal(await s.server.protection.trash.sweep(Date.now() + 31 * 86_400_000), 1);
    assert.equal((await s.api('GET', '/api/files/trash', { token: admin })).body.total, 0);
  });

  test('versions: an overwrite snapshots first; list, restore (editor only), restore of a deleted file, keep_n', async () => {
    await save('/Docs/v.txt', 'one');
    await save('/Docs/v.txt', 'two');
    await save('/Docs/v.txt', 'three');
    const list = await s.api('GET', '/api/files/versions?path=/Docs/v.txt', { token: admin });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.versions.map((v: any) => v.size),
      [3, 3],
    );
    assert.ok(existsSync(join(root, '.versions/v.txt')));
    assert.equal((await scanOps('.versions/v.txt')).length, 0);
    const oldest = list.body.versions[1].id;
    const denied = await s.api('POST', '/api/files/versions/restore', { token: viewer, body: { path: '/Docs/v.txt', id: oldest } });
    assert.ok(denied.status === 403 || denied.status === 404, String(denied.status));
    const r = await s.api('POST', '/api/files/versions/restore', { token: admin, body: { path: '/Docs/v.txt', id: oldest } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(readFileSync(join(root, 'v.txt'), 'utf8'), 'one');
    assert.equal((await s.api('GET', '/api/files/versions?path=/Docs/v.txt', { token: admin })).body.versions.length, 3, 'the restore kept what it replaced');
    await s.api('POST', '/api/files/delete', { token: admin, body: { paths: ['/Docs/v.txt'] } });
    const back = await s.api('POST', '/api/files/versions/restore', { token: admin, body: { path: '/Docs/v.txt', id: oldest } });
    assert.equal(back.status, 200, JSON.stringify(back.body));
    assert.equal(readFileSync(join(root, 'v.txt'), 'utf8'), 'one');
    const wrong = await s.api('POST', '/api/files/versions/restore', { token: admin, body: { path: '/Docs/b.txt', id: oldest } });
    assert.equal(wrong.status, 404);
    const two = await patch({ versions_keep_n: 2 });
    assert.equal(two.status, 200);
    assert.deepEqual([two.body.versions_keep_n, two.body.versions_keep_n_unset], [2, false]);
    await save('/Docs/v.txt', 'four');
    assert.equal((await s.api('GET', '/api/files/versions?path=/Docs/v.txt', { token: admin })).body.versions.length, 2);
    const unset = await patch({ versions_keep_n: null });
    assert.deepEqual(
      [unset.body.versions_keep_n, unset.body.versions_keep_n_unset],
      [20, true],
      'unset reports the effective 20 (an int, as the spec types it)',
    );
  });

  test('admin protection: GET shape, PATCH ranges (400, nothing stored), audit, non-admin refused', async () => {
    const g = await s.api('GET', '/api/admin/protection', { token: admin });
    assert.equal(g.status, 200);
    for (const k of ['trash_retention_days', 'versions_keep_n', 'share_max_ttl_days', 'shares_over_max_ttl', 'antivirus']) assert.ok(k in g.body, k);
    for (const k of [
      'enabled',
      'binary',
      'mode',
      'address',
      'reachable',
      'health',
      'version',
      'restart_pending',
      'scan_enabled',
      'scan_mode',
      'clamd_addr',
      'modes',
      'max_scan_mb',
      'max_scan_mb_min',
      'max_scan_mb_max',
      'save_scan_window_minutes',
      'save_scan_window_min',
      'save_scan_window_max',
    ])
      assert.ok(k in g.body.antivirus, k);
    assert.deepEqual(
      [g.body.antivirus.max_scan_mb_min, g.body.antivirus.max_scan_mb_max, g.body.antivirus.save_scan_window_min, g.body.antivirus.save_scan_window_max],
      [1, 10240, 2, 60],
    );
    for (const [field, value] of [
      ['trash_retention_days', 0],
      ['trash_retention_days', 3651],
      ['versions_keep_n', 1001],
      ['share_max_ttl_days', -1],
      ['av_max_scan_mb', 0],
      ['av_save_scan_window_minutes', 61],
      ['av_mode', 'cloud'],
      ['bogus', 1],
    ] as const) {
      const r = await patch({ trash_retention_days: 9, [field]: value });
      assert.equal(r.status, 400, `${field}=${value}`);
      assert.equal(r.body.details.field, field);
    }
    assert.equal((await s.api('GET', '/api/admin/protection', { token: admin })).body.trash_retention_days, 30, 'a refused PATCH stores nothing');
    const ok = await patch({ trash_retention_days: 3650, share_max_ttl_days: 0 });
    assert.equal(ok.body.trash_retention_days, 3650);
    assert.equal(ok.body.share_max_ttl_days, 0);
    assert.equal(ok.body.shares_over_max_ttl, 0);
    await patch({ trash_retention_days: 30, share_max_ttl_days: 7 });
    const audit = await s.api('GET', '/api/admin/audit?action=admin.config_change', { token: admin });
    if (audit.status === 200) assert.ok(audit.body.events.length >= 2);
    else assert.ok(((await sqlValue(s.server.db, "SELECT count(*) FROM audit WHERE action = 'admin.config_change'")) as number) >= 2);
    assert.equal((await patch({ trash_retention_days: 5 }, viewer)).status, 403);
    assert.equal((await s.api('GET', '/api/capabilities', { token: admin })).body.antivirus, false);
  });

  test('antivirus binary mode: clean recorded, EICAR quarantined with the spec payload in the bell; ineligible files are not queued', async () => {
    const db = eicarDatabase(avDir);
    const p = await patch({ av_enabled: true, av_mode: 'binary', av_database: db, av_max_scan_mb: 1 });
    assert.equal(p.status, 200, JSON.stringify(p.body));
    assert.equal(p.body.antivirus.enabled, true);
    assert.equal(p.body.antivirus.reachable, true, p.body.antivirus.health);
    assert.match(p.body.antivirus.version, /ClamAV/);
    assert.equal((await s.api('GET', '/api/capabilities', { token: admin })).body.antivirus, true);
    await upload('/Docs/in', 'clean.txt', Buffer.from('just text'));
    await upload('/Docs/in', 'eicar.com', EICAR);
    await upload('/Docs/in', 'empty.txt', Buffer.alloc(0));
    await upload('/Docs/in', 'big.bin', Buffer.alloc(1024 * 1024 + 1, 1));
    await s.server.queue.idle(20_000);
    assert.equal((await scanRow('in/clean.txt')).state, 'clean');
    assert.equal((await scanRow('in/eicar.com')).state, 'infected');
    assert.equal((await scanOps('in/empty.txt')).length + (await scanOps('in/big.bin')).length, 0);
    assert.ok(!existsSync(join(root, 'in/eicar.com')));
    assert.deepEqual((await names('/Docs/in')).sort(), ['big.bin', 'clean.txt', 'empty.txt']);
    const bell = await s.api('GET', '/api/notifications', { token: admin });
    const n = bell.body.notifications.find((x: any) => x.event === 'file.infected');
    assert.equal(n.severity, 'warning');
    assert.deepEqual(n.data.node, { storage_id: n.data.node.storage_id, path: '/Docs/in/eicar.com', name: 'eicar.com', size: EICAR.length });
    assert.equal(n.data.meta.signature, EICAR_SIGNATURE);
    assert.equal(n.data.meta.quarantined, true);
    assert.match(n.data.meta.trash_path, /^\.service-trash\/[^/]+\/eicar\.com$/);
    assert.ok(existsSync(join(root, n.data.meta.trash_path)));
    const trash = (await s.api('GET', '/api/files/trash', { token: admin })).body.items.find((i: any) => i.path === '/Docs/in/eicar.com');
    assert.equal(trash.reason, 'infected');
    assert.equal(trash.deleted_by, null);
  });

  test('text-editor saves over a file scan once, one window later; a new file scans at once; the sync walk queues at priority -1', async () => {
    await patch({ av_save_scan_window_minutes: 2 });
    await save('/Docs/edit.txt', 'v1');
    await s.server.queue.idle(20_000);
    assert.equal((await scanRow('edit.txt')).state, 'clean');
    const t0 = Date.now();
    await save('/Docs/edit.txt', 'v2');
    await save('/Docs/edit.txt', 'v3');
    const pending = (await scanOps('edit.txt')).filter((o) => o.status === 'queued');
    assert.equal(pending.length, 1, 'further saves within the window are dropped');
    assert.ok(Date.parse(pending[0].run_at) >= t0 + 110_000, pending[0].run_at);
    writeFileSync(join(root, 'dropped-in.txt'), 'arrived behind our back');
    const sid = (await s.api('GET', '/api/admin/storages', { token: admin })).body.storages[0].id;
    await s.api('POST', `/api/admin/storages/${sid}/sync`, { token: admin });
    await s.server.queue.idle(20_000);
    const ops = await scanOps('dropped-in.txt');
    assert.equal(ops.length, 1);
    assert.equal(ops[0].priority, -1);
    assert.equal((await scanRow('dropped-in.txt')).state, 'clean');
  });

  test('antivirus daemon mode: EICAR quarantined through clamd; clamd down → the op retries, the file stays, never clean; a vanished file is not an error', async () => {
    clamd = await startClamd(avDir);
    const p = await patch({ av_mode: 'daemon', av_clamd_addr: clamd.address, av_max_scan_mb: 100 });
    assert.equal(p.body.antivirus.reachable, true, p.body.antivirus.health);
    assert.equal(p.body.antivirus.address, clamd.address);
    await upload('/Docs/d', 'eicar2.com', EICAR);
    await s.server.queue.idle(20_000);
    assert.equal((await scanRow('d/eicar2.com')).state, 'infected');
    assert.ok(!existsSync(join(root, 'd/eicar2.com')));
    await clamd.stop();
    const down = await s.api('GET', '/api/admin/protection', { token: admin });
    assert.equal(down.body.antivirus.reachable, false);
    assert.match(down.body.antivirus.health, /ECONNREFUSED|clamd/);
    await upload('/Docs/d', 'eicar3.com', EICAR);
    let op: any;
    for (let i = 0; i < 100 && !(op = (await scanOps('d/eicar3.com')).find((o) => o.attempts >= 1 && o.status === 'queued')); i++) await sleep(50);
    assert.ok(op, 'the failed scan is queued again');
    assert.ok(op.error_code);
    assert.equal((await scanRow('d/eicar3.com')).state, 'error');
    assert.ok(existsSync(join(root, 'd/eicar3.com')), 'the file stays in place');
    clamd = await startClamd(avDir);
    await patch({ av_clamd_addr: clamd.address });
    await sqlRows(s.server.db, 'UPDATE ops SET run_at = ? WHERE id = ?', new Date().toISOString(), op.id);
    await s.server.queue.idle(20_000);
    assert.equal((await scanRow('d/eicar3.com')).state, 'infected', 'the retry finds it once clamd is back');
    await s.server.queue.idle(5000);
    // A file that vanishes before its scan is recorded as skipped, not as an error.
    s.server.queue.setPaused(false);
    writeFileSync(join(root, 'd/ghost.txt'), 'boo');
    await s.server.protection.antivirus.enqueue(1, 'd/ghost.txt', { key: 'ghost' });
    rmSync(join(root, 'd/ghost.txt'));
    await s.server.queue.idle(10_000);
    const ghostOp = (await scanOps('d/ghost.txt'))[0];
    assert.equal(ghostOp.status, 'completed');
    assert.equal((await scanRow('d/ghost.txt')).state, 'skipped');
  });

  test("a file deleted between the scan's stat and its read is skipped, not retried as a scan error", async () => {
    // The old flake: the op started before the test removed the file, the read failed, the op was
    // re-queued with a backoff and idle() (rightly) returned with it queued. Fault injection makes
    // that window certain: the real local driver's read runs right after the file is removed.
    writeFileSync(join(root, 'd/racer.txt'), 'here, then not');
    const storageId = ((await sqlRow(s.server.db, "SELECT id FROM storages WHERE name = 'Docs'")) as { id: number }).id;
    const driver = await s.server.catalogue.driverFor(storageId);
    const realRead = driver.read;
    // Only the scan's own read removes it: the watcher's other work (hashing, text) may read it first,
    // and removing it then made the scan see a file gone before its stat.
    const scanRunning = async () => (await scanOps('d/racer.txt')).some((o) => o.dedup_key === 'racer' && o.status === 'running');
    driver.read = async function (this: typeof driver, rel, range, signal) {
      if (rel === 'd/racer.txt' && (await scanRunning())) rmSync(join(root, rel), { force: true });
      return realRead.call(this, rel, range, signal);
    };
    try {
      await s.server.protection.antivirus.enqueue(storageId, 'd/racer.txt', { key: 'racer' });
      await s.server.queue.idle(10_000);
    } finally {
      driver.read = realRead;
    }
    const op = (await scanOps('d/racer.txt')).find((o) => o.dedup_key === 'racer');
    assert.equal(op.status, 'completed', JSON.stringify(op));
    assert.equal(op.attempts, 1);
    assert.deepEqual([(await scanRow('d/racer.txt')).state, (await scanRow('d/racer.txt')).detail], ['skipped', 'gone during the scan']);
  });
});
