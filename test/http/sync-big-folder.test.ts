/**
 * A full sync lists every folder whole: a big folder it covered counts as checked when the run started, so
 * the first listing right after does not read it all again (issue 38: a 100,000-entry folder's check ran
 * beside its first pages), while a small folder is still checked at its first listing and Refresh
 * re-checks a big one at once. Real server, a real local storage on demand, files written on disk.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server';
import { tempDir } from '../helpers/tools';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a folder of 1,000 entries the first sync listed is not checked again at its first listing; a small one is; Refresh checks the big one', async () => {
  const { dir: root, cleanup } = tempDir('filedock-big-folder-');
  mkdirSync(join(root, 'big'));
  mkdirSync(join(root, 'small'));
  for (let i = 0; i < 1000; i++) closeSync(openSync(join(root, 'big', `f${i}.txt`), 'w'));
  writeFileSync(join(root, 'small', 'a.txt'), 'a');
  const s = await startTestServer();
  try {
    const admin = await s.login();
    const st = await s.api('POST', '/api/admin/storages', {
      token: admin,
      body: { name: 'B', driver: 'local', config: { path: root }, sync_mode: 'ondemand' },
    });
    assert.equal(st.status, 200, JSON.stringify(st.body));
    const runId = (await s.api('GET', `/api/admin/sync/runs?storage_id=${st.body.id}&limit=1`, { token: admin })).body.runs[0].id;
    for (let i = 0; i < 1200; i++) {
      const run = (await s.api('GET', `/api/admin/sync/runs/${runId}`, { token: admin })).body;
      if (run.status === 'completed') break;
      assert.notEqual(run.status, 'failed', JSON.stringify(run));
      await sleep(50);
    }
    writeFileSync(join(root, 'big', 'late.txt'), 'late');
    writeFileSync(join(root, 'small', 'late.txt'), 'late');
    const names = async (folder: string) =>
      ((await s.api('GET', `/api/files/manager?path=/B/${folder}&limit=5000`, { token: admin })).body.entries as Array<{ name: string }>).map((e) => e.name);
    assert.equal((await names('big')).length, 1000, 'the catalogue holds what the sync listed');
    assert.ok(!(await names('small')).includes('late.txt'), 'a listing answers from the catalogue');
    // The small folder's first listing checked it in the background.
    let small: string[] = [];
    for (let i = 0; i < 200 && !small.includes('late.txt'); i++) {
      await sleep(25);
      small = await names('small');
    }
    assert.ok(small.includes('late.txt'), 'the small folder was checked at its first listing');
    await sleep(500);
    assert.ok(!(await names('big')).includes('late.txt'), 'the big folder was not checked again right after the sync');
    const r = await s.api('POST', '/api/files/refresh', { token: admin, body: { path: '/B/big' } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok((await names('big')).includes('late.txt'), 'Refresh checks it at once');
  } finally {
    await s.close();
    cleanup();
  }
});
