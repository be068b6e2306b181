/**
 * An outage of the target during writes, rewrites and deletes under both a
 * `mirror` and an `append_only` path (issue 39, 8a): after Fix the target
 * equals the primary by sha256, plus every file deleted under the
 * append_only path with its last bytes; no failure is resolved that a retry
 * could not repair (a copy of a file moved into the trash reads it there).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { localTree, ok, putText, until, type Tree } from '../helpers/replica';

let s: TestServer;
let token: string;
let cleanup: () => void;
let primary: string;
let backup: string;

const sorted = (t: Tree) => JSON.stringify(Object.entries(t).sort(([a], [b]) => (a < b ? -1 : 1)));
const del = (path: string) => ok(s.api('POST', '/api/files/delete', { token, body: { paths: [path] } }));
const count = async () => (await ok(s.api('GET', '/api/admin/replica/failures/count', { token }))).count as number;

before(async () => {
  let dir: string;
  ({ dir, cleanup } = tempDir('filedock-repl-outage-'));
  primary = join(dir, 'primary');
  backup = join(dir, 'backup');
  mkdirSync(primary);
  s = await startTestServer({ SERVICE_REPLICA_RETRY_BACKOFF: '50ms' });
  token = await s.login();
  const storage = await ok(s.api('POST', '/api/admin/storages', { token, body: { name: 'Home', driver: 'local', config: { path: primary } } }));
  const target = await ok(s.api('POST', '/api/admin/replication-targets', { token, body: { name: 'nas', driver: 'local', config: { path: backup } } }));
  await ok(s.api('PATCH', `/api/admin/storages/${storage.id}`, { token, body: { replica_target_id: target.id } }));
  await ok(s.api('POST', '/api/admin/replica/rules', { token, body: { path_pattern: 'Home/keep/**', mode: 'append_only', priority: 1 } }));
});

after(async () => {
  await s?.close();
  cleanup?.();
});

test('target down during writes, rewrites and deletes (mirror and append_only), then Fix: the target holds the primary and every append_only file with its last bytes', async () => {
  for (const d of ['/Home/m', '/Home/keep']) await ok(s.api('POST', '/api/files/mkdir', { token, body: { path: d } }));
  for (const f of ['m/b.txt', 'm/c.txt', 'm/e.txt', 'keep/r.txt', 'keep/rd.txt', 'keep/old.txt']) await putText(s, token, `/Home/${f}`, `up ${f}`);
  await until('the first copies', () => sorted(localTree(backup)) === sorted(localTree(primary)));

  // Down: the target's folder replaced by a file, as a dead disk would fail every write.
  renameSync(backup, backup + '.away');
  writeFileSync(backup, 'not a folder');
  const kept: Tree = {};
  const keepLast = (rel: string) => (kept[rel] = localTree(primary)[rel]);
  // mirror: a new file, a rewrite, a delete, a write then delete, a rewrite then delete.
  await putText(s, token, '/Home/m/a.txt', 'new while down');
  await putText(s, token, '/Home/m/b.txt', 'rewritten while down');
  await del('/Home/m/c.txt');
  await putText(s, token, '/Home/m/d.txt', 'written and deleted while down');
  await del('/Home/m/d.txt');
  await putText(s, token, '/Home/m/e.txt', 'rewritten then deleted while down');
  await del('/Home/m/e.txt');
  // append_only: the same, plus a file written twice then deleted; the target keeps each deleted file's last bytes.
  await putText(s, token, '/Home/keep/n.txt', 'new while down');
  await putText(s, token, '/Home/keep/r.txt', 'rewritten while down');
  await putText(s, token, '/Home/keep/wd.txt', 'written and deleted while down');
  keepLast('keep/wd.txt');
  await del('/Home/keep/wd.txt');
  await putText(s, token, '/Home/keep/rd.txt', 'rewritten then deleted while down');
  keepLast('keep/rd.txt');
  await del('/Home/keep/rd.txt');
  keepLast('keep/old.txt');
  await del('/Home/keep/old.txt');
  await putText(s, token, '/Home/keep/twice.txt', 'first');
  await putText(s, token, '/Home/keep/twice.txt', 'second, the last bytes');
  keepLast('keep/twice.txt');
  await del('/Home/keep/twice.txt');

  // Every copy has used up its attempts: nothing queued or running, the failures logged.
  await until('the queue to give up', async () => (await ok(s.api('GET', '/api/admin/replica/status', { token }))).queued_copies === 0);
  const open = (await ok(s.api('GET', '/api/admin/replica/failures?unresolved=true&limit=500', { token }))).failures as any[];
  const copyOfDeleted = open.find((f) => f.path === '/Home/keep/wd.txt' && f.op === 'copy');
  assert.ok(copyOfDeleted, `the copy of a deleted append_only file failed and is logged: ${JSON.stringify(open.map((f) => [f.path, f.op]))}`);

  // Back: Fix repairs everything (a later Fix takes what the first left, at most every 5 s).
  rmSync(backup);
  renameSync(backup + '.away', backup);
  await ok(s.api('POST', '/api/admin/replica/fix', { token }));
  let lastFix = Date.now();
  await until(
    'every failure resolved',
    async () => {
      const c = await count();
      if (c > 0 && Date.now() - lastFix > 5000) {
        lastFix = Date.now();
        await ok(s.api('POST', '/api/admin/replica/fix', { token }));
      }
      return c === 0;
    },
    60_000,
  ).catch(async (e) => {
    const left = (await ok(s.api('GET', '/api/admin/replica/failures?unresolved=true&limit=500', { token }))).failures as any[];
    throw new Error(`${(e as Error).message}: ${JSON.stringify(left.map((f) => [f.path, f.op, f.message]))}`);
  });
  await until('nothing pending', async () => (await ok(s.api('GET', '/api/admin/replica/status', { token }))).oldest_pending_at === null);
  const want = sorted({ ...localTree(primary), ...kept });
  assert.equal(sorted(localTree(backup)), want, 'the target: the primary plus every deleted append_only file with its last bytes');
  for (const gone of ['m/c.txt', 'm/d.txt', 'm/e.txt']) assert.equal(localTree(backup)[gone], undefined, `mirror: ${gone} deleted on the target too`);
});

test('a retry that finds nothing to copy for an append_only path does not resolve its failure', async () => {
  // Down again: a file written and deleted, then its trash item purged before the target is back.
  renameSync(backup, backup + '.away');
  writeFileSync(backup, 'not a folder');
  await putText(s, token, '/Home/keep/lost.txt', 'never reached the target');
  await del('/Home/keep/lost.txt');
  await until('the queue to give up', async () => (await ok(s.api('GET', '/api/admin/replica/status', { token }))).queued_copies === 0);
  const row = ((await ok(s.api('GET', '/api/admin/replica/failures?unresolved=true&limit=500', { token }))).failures as any[]).find(
    (f) => f.path === '/Home/keep/lost.txt' && f.op === 'copy',
  );
  assert.ok(row, 'the copy from the trash failed and is logged');
  rmSync(join(primary, '.service-trash'), { recursive: true, force: true });
  rmSync(backup);
  renameSync(backup + '.away', backup);
  await ok(s.api('POST', '/api/admin/replica/fix-one', { token, body: { path: '/Home/keep/lost.txt', op: 'copy' } }));
  await until('the retry to run', async () => {
    const f = ((await ok(s.api('GET', '/api/admin/replica/failures?limit=500', { token }))).failures as any[]).find((x) => x.id === row.id);
    return f.attempts > row.attempts || !!f.resolved_at;
  });
  const after = ((await ok(s.api('GET', '/api/admin/replica/failures?limit=500', { token }))).failures as any[]).find((x) => x.id === row.id);
  assert.equal(after.resolved_at, null, 'not repaired, so not resolved');
  assert.equal(after.code, 'PRIMARY_READBACK_FAIL');
  assert.match(after.message, /nothing to copy/);
  assert.equal(localTree(backup)['keep/lost.txt'], undefined);
});
