/**
 * Replication local → local-folder target through the real server: targets,
 * links, rules and settings over the admin API, writes / moves / deletes /
 * mkdir replicated, append_only keeping deleted files, a failure logged and
 * repaired by Fix, the report, the read fallback, and the bad input.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, uploadFile, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { localTree, ok, putText, until } from '../helpers/replica';

let s: TestServer;
let token: string;
let dir: string;
let cleanup: () => void;
let primary: string;
let backup: string;
let storageId: number;
let targetId: number;

before(async () => {
  ({ dir, cleanup } = tempDir('filedock-repl-'));
  primary = join(dir, 'primary');
  backup = join(dir, 'backup');
  mkdirSync(primary);
  s = await startTestServer({ SERVICE_REPLICA_RETRY_BACKOFF: '100ms' });
  token = await s.login();
  storageId = (await ok(s.api('POST', '/api/admin/storages', { token, body: { name: 'Home', driver: 'local', config: { path: primary } } }))).id;
});

after(async () => {
  await s?.close();
  cleanup?.();
});

test('no target: the status says nothing is backed up and a restore drill is refused with 409 no_backup_target', async () => {
  const st = await ok(s.api('GET', '/api/admin/replica/status', { token }));
  assert.equal(st.linked, false, 'no backups: not "up to date"');
  const drill = await s.api('POST', '/api/admin/replica/drill/run-now', { token, body: {} });
  assert.equal(drill.status, 409, JSON.stringify(drill.body));
  assert.equal(drill.body.error, 'no_backup_target');
  assert.match(drill.body.message, /No storage is backed up/);
  assert.equal((await s.api('POST', '/api/admin/replica/drill/run-now', { token, body: { path: '/Home' } })).status, 409);
  assert.equal((await s.api('GET', '/api/admin/replica/drill', { token })).status, 204, 'no drill of nothing was queued');
  assert.equal((await ok(s.api('GET', '/api/admin/status', { token }))).replication.linked, false);
});

test('targets: create, list, get, loop and root guard refused, link and unlink through the storage', async () => {
  const t = await ok(s.api('POST', '/api/admin/replication-targets', { token, body: { name: 'nas', driver: 'local', config: { path: backup } } }));
  targetId = t.id;
  assert.equal(t.mode, 'async');
  assert.equal(t.enabled, true);
  assert.equal(t.config.path, backup);
  const list = await ok(s.api('GET', '/api/admin/replication-targets', { token }));
  assert.deepEqual(
    list.targets.map((x: any) => x.name),
    ['nas'],
  );

  // At the primary's root or inside it: a loop.
  for (const path of [primary, join(primary, 'inside')]) {
    const r = await s.api('POST', '/api/admin/replication-targets', { token, body: { name: 'loop', driver: 'local', config: { path } } });
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.error, 'validation_failed');
    assert.equal(r.body.details.field, 'config.path');
  }
  // The root guard and unknown drivers, as for storages.
  const root = await s.api('POST', '/api/admin/replication-targets', { token, body: { name: 'root', driver: 'local', config: { path: '/' } } });
  assert.equal(root.status, 400);
  const unknown = await s.api('POST', '/api/admin/replication-targets', { token, body: { name: 'x', driver: 'nope', config: {} } });
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.details.field, 'driver');
  const badMode = await s.api('POST', '/api/admin/replication-targets', {
    token,
    body: { name: 'x', driver: 'local', config: { path: join(dir, 'x') }, mode: 'later' },
  });
  assert.equal(badMode.status, 400);
  assert.equal(badMode.body.details.field, 'mode');

  // Linking to a missing target is refused; linking works and shows on both sides.
  const missing = await s.api('PATCH', `/api/admin/storages/${storageId}`, { token, body: { replica_target_id: 9999 } });
  assert.equal(missing.status, 400);
  assert.equal(missing.body.details.field, 'replica_target_id');
  const linked = await ok(s.api('PATCH', `/api/admin/storages/${storageId}`, { token, body: { replica_target_id: targetId } }));
  assert.equal(linked.replica_target_id, targetId);
  assert.equal((await ok(s.api('GET', '/api/admin/replica/status', { token }))).linked, true);
  assert.deepEqual((await ok(s.api('GET', `/api/admin/replication-targets/${targetId}`, { token }))).storage_ids, [storageId]);
  const unlinked = await ok(s.api('PUT', `/api/admin/storages/${storageId}`, { token, body: { replica_target_id: null } }));
  assert.equal(unlinked.replica_target_id, null);
  assert.deepEqual((await ok(s.api('GET', `/api/admin/replication-targets/${targetId}`, { token }))).storage_ids, []);
  await ok(s.api('PUT', `/api/admin/storages/${storageId}`, { token, body: { replica_target_id: targetId } }));
});

test('writes, mkdir, copies, moves and deletes reach the target (mirror)', async () => {
  await putText(s, token, '/Home/a.txt', 'alpha');
  await uploadFile(s, token, '/Home', 'bin.dat', Buffer.alloc(300_000, 7));
  await ok(s.api('POST', '/api/files/mkdir', { token, body: { path: '/Home/docs/deep' } }));
  await putText(s, token, '/Home/docs/deep/b.txt', 'beta');
  for (let i = 0; i < 10; i++) await putText(s, token, '/Home/burst.txt', `version ${i}`);
  for (const [verb, from, to] of [
    ['copy', '/Home/docs', '/Home/docs-copy'],
    ['move', '/Home/a.txt', '/Home/docs/a-moved.txt'],
  ]) {
    const r = await s.api('POST', `/api/files/${verb}`, { token, body: { from, to } });
    assert.ok(r.status === 200 || r.status === 202, `${verb}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  await until('the target to mirror the primary', () => JSON.stringify(localTree(backup)) === JSON.stringify(localTree(primary)));
  assert.equal(readFileSync(join(backup, 'burst.txt'), 'utf8'), 'version 9');
  assert.ok(localTree(backup)['docs/a-moved.txt']);
  assert.equal(localTree(backup)['a.txt'], undefined);

  await ok(s.api('POST', '/api/files/delete', { token, body: { paths: ['/Home/bin.dat'] } }));
  await until('the delete to reach the target', () => JSON.stringify(localTree(backup)) === JSON.stringify(localTree(primary)));
  assert.equal(localTree(backup)['bin.dat'], undefined);
});

test('a folder removed on the target behind the engine is made again by the next copy into it, with no failure logged', async () => {
  await ok(s.api('POST', '/api/files/mkdir', { token, body: { path: '/Home/gone/deep' } }));
  await putText(s, token, '/Home/gone/deep/c.txt', 'gamma');
  await until('the first copy', () => !!localTree(backup)['gone/deep/c.txt']);
  // The file can appear before its copy's last step (the read-back) ran: removing the folder then fails that copy.
  await until('the first copy to finish', async () => {
    const st = await ok(s.api('GET', '/api/admin/replica/status', { token }));
    return st.queued_copies === 0 && st.oldest_pending_at === null;
  });
  // The engine made gone/deep and remembers it (no mkdir before the next copy): removed under it now.
  rmSync(join(backup, 'gone'), { recursive: true });
  await putText(s, token, '/Home/gone/deep/d.txt', 'delta');
  await until('the second copy', () => localTree(backup)['gone/deep/d.txt'] === localTree(primary)['gone/deep/d.txt']);
  const all = await ok(s.api('GET', '/api/admin/replica/failures?limit=500', { token }));
  assert.deepEqual(
    all.failures.filter((f: any) => f.path.startsWith('/Home/gone/')),
    [],
    'the write was retried inline, not failed',
  );
  await ok(s.api('POST', '/api/files/delete', { token, body: { paths: ['/Home/gone'] } }));
  await until('the delete to reach the target', () => JSON.stringify(localTree(backup)) === JSON.stringify(localTree(primary)));
});

test('a chunked upload (the driver multipart path) is replicated once it is published', async () => {
  const data = Buffer.alloc(3 * 1024 * 1024 + 17, 3);
  const init = await ok(s.api('POST', '/api/files/upload/init', { token, body: { path: '/Home/chunked.bin', size: data.length, chunk_size: 1024 * 1024 } }));
  const etags: Array<{ part: number; etag: string }> = [];
  for (let part = 1; part * init.chunk_size < data.length + init.chunk_size; part++) {
    const bytes = data.subarray((part - 1) * init.chunk_size, part * init.chunk_size);
    const r = await ok(
      s.api('POST', `/api/files/upload/chunk?upload_id=${init.upload_id}&part=${part}`, {
        token,
        raw: new Uint8Array(bytes),
        headers: { 'content-type': 'application/octet-stream' },
      }),
    );
    etags.push({ part, etag: r.etag });
  }
  await ok(s.api('POST', '/api/files/upload/finalize', { token, body: { upload_id: init.upload_id, etags } }));
  assert.ok(localTree(primary)['chunked.bin']);
  await until('chunked.bin on the target', () => localTree(backup)['chunked.bin'] === localTree(primary)['chunked.bin']);
});

test('rules: append_only keeps deleted files on the target, skip never copies; bad globs and modes refused', async () => {
  for (const [body, field] of [
    [{ path_pattern: 'a/**b', mode: 'mirror' }, 'path_pattern'],
    [{ path_pattern: 'x/[ab]', mode: 'mirror' }, 'path_pattern'],
    [{ path_pattern: '', mode: 'mirror' }, 'path_pattern'],
    [{ path_pattern: 'Home/**', mode: 'sometimes' }, 'mode'],
    [{ mode: 'mirror' }, 'path_pattern'],
  ] as const) {
    const r = await s.api('POST', '/api/admin/replica/rules', { token, body });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error, 'validation_failed');
    assert.equal(r.body.details.field, field);
  }
  const keep = await ok(s.api('POST', '/api/admin/replica/rules', { token, body: { path_pattern: 'Home/keep/**', mode: 'append_only', priority: 10 } }));
  await ok(s.api('POST', '/api/admin/replica/rules', { token, body: { path_pattern: '**/*.tmp', mode: 'skip', priority: 5 } }));
  assert.deepEqual(
    (await ok(s.api('GET', '/api/admin/replica/rules', { token }))).rules.map((r: any) => r.priority),
    [5, 10],
  );

  await ok(s.api('POST', '/api/files/mkdir', { token, body: { path: '/Home/keep' } }));
  await putText(s, token, '/Home/keep/photo.txt', 'precious');
  await putText(s, token, '/Home/scratch.tmp', 'junk');
  await until('the append_only file on the target', () => !!localTree(backup)['keep/photo.txt']);
  await ok(s.api('POST', '/api/files/delete', { token, body: { paths: ['/Home/keep/photo.txt'] } }));
  await putText(s, token, '/Home/after.txt', 'after');
  await until('a later write to arrive', () => !!localTree(backup)['after.txt']);
  assert.equal(readFileSync(join(backup, 'keep/photo.txt'), 'utf8'), 'precious', 'append_only: the backup copy stays');
  assert.equal(localTree(backup)['scratch.tmp'], undefined, 'skip: never copied');

  // A rule change applies at once.
  await ok(s.api('PATCH', `/api/admin/replica/rules/${keep.id}`, { token, body: { mode: 'skip' } }));
  await putText(s, token, '/Home/keep/new.txt', 'not copied');
  await putText(s, token, '/Home/after2.txt', 'after');
  await until('a later write to arrive', () => !!localTree(backup)['after2.txt']);
  assert.equal(localTree(backup)['keep/new.txt'], undefined);
  await ok(s.api('DELETE', `/api/admin/replica/rules/${keep.id}`, { token }));
});

test('settings: report_cron checked with croner, default_mode checked, changes apply', async () => {
  const now = await ok(s.api('GET', '/api/admin/replica/settings', { token }));
  assert.deepEqual(Object.keys(now).sort(), [
    'audit_cron',
    'audit_full_cron',
    'audit_sample_size',
    'default_mode',
    'drill_cron',
    'report_cron',
    'report_enabled',
  ]);
  const bad = await s.api('PATCH', '/api/admin/replica/settings', { token, body: { report_cron: 'every tuesday' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.details.field, 'report_cron');
  const badMode = await s.api('PATCH', '/api/admin/replica/settings', { token, body: { default_mode: 'often' } });
  assert.equal(badMode.status, 400);
  assert.equal(badMode.body.details.field, 'default_mode');
  const set = await ok(
    s.api('PATCH', '/api/admin/replica/settings', { token, body: { report_cron: '0 3 * * MON', report_enabled: true, default_mode: 'append_only' } }),
  );
  assert.equal(set.report_cron, '0 3 * * MON');
  assert.equal(set.default_mode, 'append_only');
  await putText(s, token, '/Home/ao.txt', 'x');
  await until('ao.txt on the target', () => !!localTree(backup)['ao.txt']);
  await ok(s.api('POST', '/api/files/delete', { token, body: { paths: ['/Home/ao.txt'] } }));
  await putText(s, token, '/Home/ao-after.txt', 'x');
  await until('a later write', () => !!localTree(backup)['ao-after.txt']);
  assert.ok(localTree(backup)['ao.txt'], 'default_mode append_only keeps the deleted file');
  await ok(s.api('PATCH', '/api/admin/replica/settings', { token, body: { default_mode: 'mirror' } }));
});

test('report: 204 before the first run, then one row per run', async () => {
  const first = await s.api('GET', '/api/admin/replica/report', { token });
  assert.equal(first.status, 204);
  const run = await ok(s.api('POST', '/api/admin/replica/report/run-now', { token }));
  assert.equal(typeof run.unresolved, 'number');
  assert.deepEqual(
    run.targets.map((t: any) => t.storages),
    [['Home']],
  );
  const got = await ok(s.api('GET', '/api/admin/replica/report', { token }));
  assert.equal(got.ran_at, run.ran_at);
});

test('a sync target holds the copy before the write answers', async () => {
  const t = await ok(s.api('PATCH', `/api/admin/replication-targets/${targetId}`, { token, body: { mode: 'sync' } }));
  assert.equal(t.mode, 'sync');
  for (let i = 0; i < 3; i++) {
    await putText(s, token, `/Home/sync/s${i}.txt`, `sync ${i}`).catch(async () => {
      await ok(s.api('POST', '/api/files/mkdir', { token, body: { path: '/Home/sync' } }));
      await putText(s, token, `/Home/sync/s${i}.txt`, `sync ${i}`);
    });
    // No polling: the answer came after the target write.
    assert.equal(readFileSync(join(backup, `sync/s${i}.txt`), 'utf8'), `sync ${i}`);
  }
  await ok(s.api('PATCH', `/api/admin/replication-targets/${targetId}`, { token, body: { mode: 'async' } }));
  // A disabled target gets nothing; enabling it again resumes.
  await ok(s.api('PATCH', `/api/admin/replication-targets/${targetId}`, { token, body: { enabled: false } }));
  // A disabled target backs up nothing: no "up to date", no drill.
  assert.equal((await ok(s.api('GET', '/api/admin/replica/status', { token }))).linked, false);
  assert.equal((await s.api('POST', '/api/admin/replica/drill/run-now', { token, body: {} })).status, 409);
  await putText(s, token, '/Home/while-disabled.txt', 'local');
  await ok(s.api('PATCH', `/api/admin/replication-targets/${targetId}`, { token, body: { enabled: true } }));
  await putText(s, token, '/Home/after-enable.txt', 'copied');
  await until('after-enable.txt on the target', () => !!localTree(backup)['after-enable.txt']);
  assert.equal(localTree(backup)['while-disabled.txt'], undefined);
});

test('target gone: failures logged with their code, the same failure counts attempts, Fix repairs, trees identical', async () => {
  // The target's folder replaced by a file: every write to it fails, as a dead disk would.
  renameSync(backup, backup + '.away');
  writeFileSync(backup, 'not a folder');
  for (let i = 0; i < 5; i++)
    await putText(s, token, `/Home/down/f${i}.txt`, `while down ${i}`).catch(async () => {
      await ok(s.api('POST', '/api/files/mkdir', { token, body: { path: '/Home/down' } }));
      await putText(s, token, `/Home/down/f${i}.txt`, `while down ${i}`);
    });
  await until('failures logged', async () => (await ok(s.api('GET', '/api/admin/replica/failures/count', { token }))).count >= 5);
  const list = await ok(s.api('GET', '/api/admin/replica/failures?unresolved=true&limit=50', { token }));
  const f0 = list.failures.find((f: any) => f.path === '/Home/down/f0.txt');
  assert.ok(f0, JSON.stringify(list.failures));
  assert.equal(f0.op, 'write');
  assert.equal(f0.code, 'REPLICA_WRITE_FAIL');
  assert.equal(f0.resolved_at, null);
  // The queue retries up to 3 attempts; each failure of the same (path, op) raises the count.
  await until('three attempts', async () => {
    const l = await ok(s.api('GET', '/api/admin/replica/failures?unresolved=true', { token }));
    return l.failures.find((f: any) => f.path === '/Home/down/f0.txt')?.attempts === 3;
  });
  const notify = await ok(s.api('GET', '/api/notifications', { token }));
  assert.ok(JSON.stringify(notify).includes('replica_fail'));
  // The recovery point: the oldest change not on the target yet.
  await new Promise((r) => setTimeout(r, 1100));
  const st = await ok(s.api('GET', '/api/admin/replica/status', { token }));
  assert.ok(st.oldest_pending_at && st.rpo_s >= 1, JSON.stringify(st));
  assert.equal(st.rpo_warn, false);
  assert.equal(st.rpo_warn_s, 3600);
  assert.ok(st.unresolved >= 5);
  const status = await ok(s.api('GET', '/api/admin/status', { token }));
  assert.equal(status.replication.oldest_pending_at, st.oldest_pending_at);

  rmSync(backup);
  renameSync(backup + '.away', backup);
  const fixOne = await ok(s.api('POST', '/api/admin/replica/fix-one', { token, body: { path: '/Home/down/f0.txt', op: 'write' } }));
  assert.equal(fixOne.queued, 1);
  const fix = await ok(s.api('POST', '/api/admin/replica/fix', { token }));
  assert.ok(fix.queued >= 4, JSON.stringify(fix));
  await until('every failure resolved', async () => (await ok(s.api('GET', '/api/admin/replica/failures/count', { token }))).count === 0);
  // Everything the rules replicate is on the target, byte for byte (the skipped paths of the rules test aside).
  const skipped = new Set(['scratch.tmp', 'keep/new.txt', 'while-disabled.txt']); // the audit test back-fills the last two
  await until('identical trees', () => {
    const p = localTree(primary);
    const b = localTree(backup);
    return Object.entries(p).every(([k, v]) => skipped.has(k) || b[k] === v);
  });
  for (let i = 0; i < 5; i++) assert.equal(readFileSync(join(backup, `down/f${i}.txt`), 'utf8'), `while down ${i}`);
  const resolved = await ok(s.api('GET', '/api/admin/replica/failures?limit=500', { token }));
  assert.ok(resolved.failures.every((f: any) => f.resolved_at));
  // Retries whose rows a Fix already resolved may still be queued (skipped when they run): the recovery point is 0 once they are done.
  await until('nothing pending', async () => (await ok(s.api('GET', '/api/admin/replica/status', { token }))).oldest_pending_at === null);
  const report = await ok(s.api('POST', '/api/admin/replica/report/run-now', { token }));
  assert.ok(report.repaired_24h >= 5);
  assert.equal(report.actionable, true);
  assert.equal(report.rpo_s, 0);
  const events = JSON.stringify(await ok(s.api('GET', '/api/notifications', { token })));
  for (const e of ['replica_fail', 'replica_reconcile_done', 'replica_status_report']) assert.ok(events.includes(e), e);
  const bad = await s.api('POST', '/api/admin/replica/fix-one', { token, body: { path: '/Home/none.txt', op: 'write' } });
  assert.equal(bad.status, 404);
  const badOp = await s.api('POST', '/api/admin/replica/fix-one', { token, body: { path: '/Home/none.txt', op: 'rename' } });
  assert.equal(badOp.status, 400);
});

test('audit: content hashes compared, a differing and a missing copy repaired; the result in the report', async () => {
  assert.equal((await s.api('GET', '/api/admin/replica/audit', { token })).status, 204);
  // Same size, other bytes: only a content hash sees it.
  writeFileSync(join(backup, 'docs/deep/b.txt'), 'BETA');
  rmSync(join(backup, 'burst.txt'));
  const run = await ok(s.api('POST', '/api/admin/replica/audit/run-now', { token, body: { kind: 'full' } }), 202);
  assert.ok(run.op_id);
  await until('the audit result', async () => (await s.api('GET', '/api/admin/replica/audit', { token })).status === 200);
  const audit = await ok(s.api('GET', '/api/admin/replica/audit', { token }));
  assert.equal(audit.kind, 'full');
  assert.equal(audit.mismatched, 1, JSON.stringify(audit));
  // Missing: the removed copy, and what earlier tests wrote while the target was disabled and while keep/ was
  // skipped by a rule since deleted: the audit back-fills those too.
  assert.deepEqual(audit.repaired.sort(), ['/Home/burst.txt', '/Home/docs/deep/b.txt', '/Home/keep/new.txt', '/Home/while-disabled.txt']);
  assert.equal(audit.missing, 3, JSON.stringify(audit));
  assert.ok(audit.checked >= 5);
  await until('the repairs', () => readFileSync(join(backup, 'docs/deep/b.txt'), 'utf8') === 'beta' && !!localTree(backup)['burst.txt']);
  await until('the audit failures resolved', async () => (await ok(s.api('GET', '/api/admin/replica/failures/count', { token }))).count === 0);
  const rows = (await ok(s.api('GET', '/api/admin/replica/failures?limit=500', { token }))).failures.filter((f: any) => f.code === 'REPLICA_AUDIT_MISMATCH');
  assert.equal(rows.length, 4);
  assert.ok(rows.every((f: any) => f.resolved_at));
  const report = await ok(s.api('POST', '/api/admin/replica/report/run-now', { token }));
  assert.equal(report.audit.mismatched, 1);
  // A sample audit of a healthy backup finds nothing.
  await ok(s.api('POST', '/api/admin/replica/audit/run-now', { token, body: { kind: 'sample', sample: 20 } }), 202);
  await until('the sample audit', async () => (await ok(s.api('GET', '/api/admin/replica/audit', { token }))).kind === 'sample');
  const sample = await ok(s.api('GET', '/api/admin/replica/audit', { token }));
  assert.deepEqual([sample.missing, sample.mismatched], [0, 0], JSON.stringify(sample));
  assert.ok(sample.checked > 0);
});

test('restore drill: a folder restored from the replica into a scratch folder and compared byte for byte', async () => {
  assert.equal((await s.api('GET', '/api/admin/replica/drill', { token })).status, 204);
  const drillOf = async (body: object) => {
    const before = (await s.api('GET', '/api/admin/replica/drill', { token })).body?.ran_at ?? '';
    await ok(s.api('POST', '/api/admin/replica/drill/run-now', { token, body }), 202);
    await until('the drill result', async () => ((await s.api('GET', '/api/admin/replica/drill', { token })).body?.ran_at ?? '') > before);
    return ok(s.api('GET', '/api/admin/replica/drill', { token }));
  };
  const good = await drillOf({ path: '/Home/docs' });
  assert.equal(good.folder, '/Home/docs');
  assert.ok(good.files >= 2, JSON.stringify(good));
  assert.deepEqual([good.ok, good.identical, good.differing, good.missing_on_replica], [true, good.files, [], []]);
  writeFileSync(join(backup, 'docs/deep/b.txt'), 'BETA');
  const bad = await drillOf({ path: '/Home/docs' });
  assert.equal(bad.ok, false);
  assert.deepEqual(bad.differing, ['/Home/docs/deep/b.txt']);
  writeFileSync(join(backup, 'docs/deep/b.txt'), 'beta');
  // Asked back to back, the second drill (another folder) is not absorbed by the first, queued or running.
  const first = await ok(s.api('POST', '/api/admin/replica/drill/run-now', { token, body: { path: '/Home/docs' } }), 202);
  const second = await ok(s.api('POST', '/api/admin/replica/drill/run-now', { token, body: { path: '/Home/docs/deep' } }), 202);
  assert.notEqual(first.op_id, second.op_id);
  await until('the second drill result', async () => (await s.api('GET', '/api/admin/replica/drill', { token })).body?.folder === '/Home/docs/deep');
  const any = await drillOf({});
  assert.ok(any.folder?.startsWith('/Home'), JSON.stringify(any));
  assert.deepEqual((await ok(s.api('POST', '/api/admin/replica/report/run-now', { token }))).drill.ran_at, any.ran_at);
  assert.equal((await s.api('POST', '/api/admin/replica/drill/run-now', { token, body: { path: '/Nowhere/x' } })).status, 404);
});

test('read fallback: a primary that cannot be read is served from the target (raw and a share link), and primary_read_fail rings', async () => {
  await putText(s, token, '/Home/served.txt', 'from wherever');
  await until('served.txt on the target', () => !!localTree(backup)['served.txt']);
  // The primary's root folder vanishes (an unmounted disk): the local driver answers storage_unavailable.
  const link = await ok(s.api('POST', '/api/files/share', { token, body: { path: '/Home/served.txt' } }));
  renameSync(primary, primary + '.gone');
  try {
    const r = await fetch(`${s.url}/api/files/raw?path=${encodeURIComponent('/Home/served.txt')}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.status, 200);
    assert.equal(await r.text(), 'from wherever');
    const shared = await fetch(`${s.url}/s/${link.token}`);
    assert.equal(shared.status, 200, 'a share link is served from the target too');
    assert.equal(await shared.text(), 'from wherever');
    const notify = await ok(s.api('GET', '/api/notifications', { token }));
    assert.ok(JSON.stringify(notify).includes('primary_read_fail'));
  } finally {
    renameSync(primary + '.gone', primary);
  }
});

test('delete a target: storages unlinked, later writes stay local', async () => {
  const del = await ok(s.api('DELETE', `/api/admin/replication-targets/${targetId}`, { token }));
  assert.equal(del.unlinked, 1);
  assert.equal((await ok(s.api('GET', `/api/admin/storages/${storageId}`, { token }))).replica_target_id, null);
  await putText(s, token, '/Home/unlinked.txt', 'local only');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(localTree(backup)['unlinked.txt'], undefined);
});
