/**
 * A first sync of a folder of a few thousand files on a storage backed up to
 * a target: every file the sync found is queued for its copy. On PostgreSQL
 * the sync's batches used to hold the event loop while the hook asked for
 * the storage's link, which then timed out as `database_busy` and the whole
 * batch's copies were dropped ("replication of 2000 synced writes could not
 * be queued"), left to the next content audit.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';
import { ok, until } from '../helpers/replica';

const FILES = 3000;
let s: TestServer;
let token: string;
let dir: string;
let cleanup: () => void;

before(async () => {
  ({ dir, cleanup } = tempDir('filedock-repl-first-'));
  mkdirSync(join(dir, 'primary'));
  mkdirSync(join(dir, 'backup'));
  s = await startTestServer();
  token = await s.login();
});

after(async () => {
  await s?.close();
  cleanup?.();
});

test(`a first sync of ${FILES} files queues a copy of every one`, async () => {
  const primary = join(dir, 'primary');
  const target = await ok(
    s.api('POST', '/api/admin/replication-targets', { token, body: { name: 'nas', driver: 'local', config: { path: join(dir, 'backup') } } }),
  );
  const storage = await ok(s.api('POST', '/api/admin/storages', { token, body: { name: 'Photos', driver: 'local', config: { path: primary } } }));
  await ok(s.api('PATCH', `/api/admin/storages/${storage.id}`, { token, body: { replica_target_id: target.id } }));
  // The copies wait (background work paused): what counts here is that each was queued.
  s.server.queue.setPaused(true);
  for (let d = 0; d < 30; d++) {
    mkdirSync(join(primary, `d${d}`));
    for (let i = 0; i < FILES / 30; i++) writeFileSync(join(primary, `d${d}`, `f${i}.txt`), `${d}/${i}`);
  }
  const sync = await ok(s.api('POST', `/api/admin/storages/${storage.id}/sync`, { token }), 202);
  await until('the first sync finished', async () => (await ok(s.api('GET', `/api/admin/sync/runs/${sync.run_id}`, { token }))).status !== 'running', 120_000);
  const queued = async () =>
    Number(
      (
        await s.server.db.async.sql<{ n: unknown }>("SELECT count(*) AS n FROM ops WHERE kind = 'replica.copy' AND dedup_key LIKE ?", [
          `replica:${storage.id}:write:d%/f%`,
        ])
      )[0]!.n,
    );
  await until(`${FILES} copies queued`, async () => (await queued()) === FILES, 30_000).catch(async (e) => {
    assert.fail(`${await queued()} of ${FILES} copies queued: ${e}`);
  });
});
