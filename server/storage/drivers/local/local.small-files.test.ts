/**
 * Small files kept in memory (local.small-files.ts) through the driver's `statLocal`: only a settled file is
 * kept, and a write in place, a replacement, a removal or a symlink swapped into its path is never answered
 * with the old bytes.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, readSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAppError } from '../../../errors';
import { tempDir } from '../../../../test/helpers/tools';
import { localDriver } from '.';
import { RACY_MS, SMALL_MAX_BYTES, smallFiles } from './local.small-files';
import type { StorageDriver } from '../../types';

let tmp: ReturnType<typeof tempDir>;
let d: StorageDriver;
let root: string;

before(async () => {
  tmp = tempDir('filedock-small-');
  root = `${tmp.dir}/root`;
  d = await localDriver.create({ path: root }, { stateDir: '/nonexistent', uid: 'test' });
  mkdirSync(`${root}/a`);
  mkdirSync(`${tmp.dir}/outside`);
  writeFileSync(`${root}/a/note.txt`, 'first');
  writeFileSync(`${root}/a/gone.txt`, 'gone');
  writeFileSync(`${root}/a/big.bin`, Buffer.alloc(SMALL_MAX_BYTES + 1, 7));
  writeFileSync(`${tmp.dir}/outside/note.txt`, 'outside');
  mkdirSync(`${root}/many`);
  for (let i = 0; i < 600; i++) writeFileSync(`${root}/many/${i}.bin`, Buffer.alloc(SMALL_MAX_BYTES, i % 256));
  // Everything above settles: older than the racy window.
  await sleep(RACY_MS + 200);
});
after(() => tmp.cleanup());

/** What a download of `rel` would send: the kept bytes, or the descriptor's contents (closed here). */
async function served(rel: string): Promise<{ text: string; kept: boolean }> {
  const got = await d.statLocal!(rel, { open: true });
  if (got.bytes) {
    assert.equal(got.fd, undefined, 'bytes or a descriptor, never both');
    return { text: got.bytes.toString(), kept: true };
  }
  assert.equal(typeof got.fd, 'number');
  const buf = Buffer.alloc(got.entry.size);
  readSync(got.fd!, buf, 0, buf.length, 0);
  closeSync(got.fd!);
  return { text: buf.toString(), kept: false };
}

test('a settled small file is read once and then served from memory; a large one always from disk', async () => {
  assert.deepEqual(await served('a/note.txt'), { text: 'first', kept: true });
  assert.deepEqual(await served('a/note.txt'), { text: 'first', kept: true });
  assert.equal((await served('a/big.bin')).kept, false);
});

test('a write in place is seen at once (the change time moved), and the fresh bytes are not kept until they settle', async () => {
  await served('a/note.txt');
  writeFileSync(`${root}/a/note.txt`, 'other'); // same size
  assert.deepEqual(await served('a/note.txt'), { text: 'other', kept: false });
  assert.deepEqual(await served('a/note.txt'), { text: 'other', kept: false });
});

test('a replacement by rename and a removal are seen at once', async () => {
  await served('a/gone.txt');
  writeFileSync(`${tmp.dir}/staged`, 'new!');
  renameSync(`${tmp.dir}/staged`, `${root}/a/gone.txt`);
  assert.equal((await served('a/gone.txt')).text, 'new!');
  rmSync(`${root}/a/gone.txt`);
  await assert.rejects(d.statLocal!('a/gone.txt', { open: true }), (e) => isAppError(e) && e.code === 'not_found');
});

test('a folder on the path swapped for a symlink out of the root never serves the kept bytes nor the outside file', async () => {
  mkdirSync(`${root}/b`);
  writeFileSync(`${root}/b/note.txt`, 'inner');
  await sleep(RACY_MS + 200);
  assert.deepEqual(await served('b/note.txt'), { text: 'inner', kept: true });
  renameSync(`${root}/b`, `${root}/b-moved`);
  symlinkSync(`${tmp.dir}/outside`, `${root}/b`);
  await assert.rejects(d.statLocal!('b/note.txt', { open: true }), (e) => isAppError(e) && e.code === 'permission_denied');
});

test('the kept bytes stay within the budget (32 MiB): the least recently served go, and every file is still served whole', async () => {
  for (let i = 0; i < 600; i++) {
    const got = await d.statLocal!(`many/${i}.bin`, { open: true });
    assert.equal(got.bytes?.length, SMALL_MAX_BYTES);
    assert.equal(got.bytes?.[0], i % 256);
  }
  assert.ok(smallFiles.keptBytes <= 32 << 20, `${smallFiles.keptBytes} bytes kept`);
  assert.ok(smallFiles.keptBytes >= 16 << 20, 'eviction leaves most of the budget in use');
  // The most recent is still kept: served again without a read (the same buffer).
  const a = await d.statLocal!('many/599.bin', { open: true });
  const b = await d.statLocal!('many/599.bin', { open: true });
  assert.equal(a.bytes, b.bytes);
});
