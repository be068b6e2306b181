/**
 * Replication of changes made outside the service, through the real server
 * (local → local-folder targets): files dropped into, changed in, renamed in
 * or deleted from a storage's folder on disk are found by the catalogue's
 * watcher (fsnotify) or its poll and reach the target by sha256; append_only
 * keeps a file deleted on disk; a write through the API, which the watcher
 * sees too, is queued once.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { localTree, ok, putText, until } from '../helpers/replica';

let s: TestServer;
let token: string;
let cleanup: () => void;
const dirs = { watched: '', polled: '', watchedBackup: '', polledBackup: '' };
const ids = { watched: 0, polled: 0 };

/** Waits until `rel` on the target holds what the primary holds (by sha256), or is absent from both. */
const mirrored = (primary: string, backup: string, rel: string, ms?: number) =>
  until(`${rel} on the target to match the primary`, () => localTree(backup)[rel] === localTree(primary)[rel], ms);
const catalogued = (storageId: number, rel: string) =>
  !!s.server.db.sqlite!.prepare('SELECT 1 FROM nodes WHERE storage_id = ? AND path = ?').get(storageId, rel);
const copyOps = (storageId: number, op: string, rel: string) =>
  (
    s.server.db
      .sqlite!.prepare("SELECT count(*) AS n FROM ops WHERE kind = 'replica.copy' AND payload = ?")
      .get(JSON.stringify({ storage_id: storageId, op, rel })) as { n: number }
  ).n;

before(async () => {
  const t = tempDir('filedock-repl-disk-');
  cleanup = t.cleanup;
  for (const k of Object.keys(dirs) as Array<keyof typeof dirs>) dirs[k] = join(t.dir, k);
  mkdirSync(dirs.watched);
  mkdirSync(dirs.polled);
  // Already there when the storage is added: its first sync finds it.
  mkdirSync(join(dirs.watched, 'old'));
  writeFileSync(join(dirs.watched, 'old/photo0.jpg'), randomBytes(50_000));
  s = await startTestServer({ SERVICE_REPLICA_RETRY_BACKOFF: '100ms' });
  token = await s.login();
  await ok(s.api('POST', '/api/admin/replica/rules', { token, body: { path_pattern: 'Watched/keep/**', mode: 'append_only', priority: 1 } }));
  for (const [name, key, sync] of [
    ['Watched', 'watched', { sync_mode: 'fsnotify' }],
    ['Polled', 'polled', { sync_mode: 'poll', sync_interval_s: 5 }],
  ] as const) {
    const target = await ok(
      s.api('POST', '/api/admin/replication-targets', { token, body: { name: `nas-${key}`, driver: 'local', config: { path: dirs[`${key}Backup`] } } }),
    );
    const storage = await ok(
      s.api('POST', '/api/admin/storages', { token, body: { name, driver: 'local', config: { path: dirs[key] }, ...sync, replica_target_id: target.id } }),
    );
    assert.equal(storage.sync_mode, sync.sync_mode);
    ids[key] = storage.id;
  }
});

after(async () => {
  await s?.close();
  cleanup?.();
});

test('watched folder: a file found by the first sync, then files dropped in, changed and deleted on disk follow on the target (mirror)', async () => {
  await mirrored(dirs.watched, dirs.watchedBackup, 'old/photo0.jpg');
  assert.ok(localTree(dirs.watchedBackup)['old/photo0.jpg']);

  writeFileSync(join(dirs.watched, 'dropped.jpg'), randomBytes(200_000));
  mkdirSync(join(dirs.watched, 'photos'));
  writeFileSync(join(dirs.watched, 'photos/img1.jpg'), randomBytes(300_000));
  await mirrored(dirs.watched, dirs.watchedBackup, 'dropped.jpg');
  await mirrored(dirs.watched, dirs.watchedBackup, 'photos/img1.jpg');
  assert.ok(localTree(dirs.watchedBackup)['photos/img1.jpg']);

  // Changed on disk (another size: the sync's drift check is size, mtime or etag).
  const before = localTree(dirs.watchedBackup)['dropped.jpg'];
  writeFileSync(join(dirs.watched, 'dropped.jpg'), randomBytes(123_456));
  await mirrored(dirs.watched, dirs.watchedBackup, 'dropped.jpg');
  assert.notEqual(localTree(dirs.watchedBackup)['dropped.jpg'], before);

  // Deleted on disk: mirror removes the target copy; a whole folder too.
  rmSync(join(dirs.watched, 'dropped.jpg'));
  rmSync(join(dirs.watched, 'photos'), { recursive: true });
  await until('the deletions on the target', () => {
    const b = localTree(dirs.watchedBackup);
    return !b['dropped.jpg'] && !b['photos/img1.jpg'];
  });
  assert.deepEqual(localTree(dirs.watchedBackup), localTree(dirs.watched));
});

test('watched folder, append_only path: a file deleted on disk stays on the target', async () => {
  mkdirSync(join(dirs.watched, 'keep'));
  writeFileSync(join(dirs.watched, 'keep/precious.jpg'), randomBytes(80_000));
  await mirrored(dirs.watched, dirs.watchedBackup, 'keep/precious.jpg');
  const copy = localTree(dirs.watchedBackup)['keep/precious.jpg'];
  assert.ok(copy);

  rmSync(join(dirs.watched, 'keep/precious.jpg'));
  await until('the watcher to drop it from the catalogue', () => !catalogued(ids.watched, 'keep/precious.jpg'));
  // A later change on disk landing shows the sync's work since was replicated.
  writeFileSync(join(dirs.watched, 'keep/later.jpg'), randomBytes(1000));
  await mirrored(dirs.watched, dirs.watchedBackup, 'keep/later.jpg');
  assert.equal(localTree(dirs.watchedBackup)['keep/precious.jpg'], copy, 'append_only: the backup copy stays');
  assert.equal(copyOps(ids.watched, 'delete', 'keep/precious.jpg'), 0, 'no delete job queued for an append_only path');
});

test('a write through the API is queued once, although the watcher and a full sync see the file too', async () => {
  await putText(s, token, '/Watched/api.txt', 'through the service');
  await mirrored(dirs.watched, dirs.watchedBackup, 'api.txt');
  const run = await ok(s.api('POST', `/api/admin/storages/${ids.watched}/sync`, { token }), 202);
  await until('the full sync', async () => (await ok(s.api('GET', `/api/admin/sync/runs/${run.run_id}`, { token }))).status === 'completed');
  assert.equal(copyOps(ids.watched, 'write', 'api.txt'), 1);
  // Changed on disk afterwards: the watcher's job copies it (the finished job's key does not absorb it).
  writeFileSync(join(dirs.watched, 'api.txt'), 'changed on disk, longer than before');
  await mirrored(dirs.watched, dirs.watchedBackup, 'api.txt');
});

test('polled storage: files added, renamed and deleted on disk reach the target at the next poll', async () => {
  mkdirSync(join(dirs.polled, 'inbox'));
  writeFileSync(join(dirs.polled, 'inbox/a.bin'), randomBytes(64_000));
  writeFileSync(join(dirs.polled, 'b.bin'), randomBytes(1_500_000));
  await until(
    'the poll to copy both',
    () => {
      const p = localTree(dirs.polled);
      const b = localTree(dirs.polledBackup);
      return b['inbox/a.bin'] === p['inbox/a.bin'] && b['b.bin'] === p['b.bin'];
    },
    30_000,
  );
  renameSync(join(dirs.polled, 'inbox/a.bin'), join(dirs.polled, 'a-renamed.bin'));
  rmSync(join(dirs.polled, 'b.bin'));
  await until('the rename and the delete on the target', () => JSON.stringify(localTree(dirs.polledBackup)) === JSON.stringify(localTree(dirs.polled)), 30_000);
  assert.ok(localTree(dirs.polledBackup)['a-renamed.bin']);
  assert.equal(localTree(dirs.polledBackup)['b.bin'], undefined);
});
