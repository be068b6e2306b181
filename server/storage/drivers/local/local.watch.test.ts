/** Watching reports changed relative paths, debounced, and refuses trees too big to watch. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isAppError } from '../../../errors';
import { TEMP_PREFIX } from '../../../lib/paths';
import { tempDir } from '../../../../test/helpers/tools';
import { localDriver } from '.';
import { watchLocal } from './local.watch';

test('watch reports a change as relative paths, ignoring temp files', async () => {
  const tmp = tempDir('filedock-local-watch-');
  const d = await localDriver.create({ path: `${tmp.dir}/root` }, { stateDir: tmp.dir, uid: 'w' });
  mkdirSync(`${tmp.dir}/root/docs`);
  const batches: string[][] = [];
  const stop = await d.watch!((paths) => batches.push(paths));
  writeFileSync(`${tmp.dir}/root/docs/${TEMP_PREFIX}x`, 'temp');
  writeFileSync(`${tmp.dir}/root/docs/a.txt`, 'a');
  writeFileSync(`${tmp.dir}/root/docs/b.txt`, 'b');
  const deadline = Date.now() + 5000;
  while (batches.flat().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  stop();
  await d.close();
  tmp.cleanup();
  assert.deepEqual([...new Set(batches.flat())].sort(), ['docs/a.txt', 'docs/b.txt']);
  assert.equal(batches.length, 1, 'both changes arrive in one debounced batch');
});

test('a tree with more folders than the limit is refused with unsupported', async () => {
  const tmp = tempDir('filedock-local-watch-');
  for (let i = 0; i < 12; i++) mkdirSync(`${tmp.dir}/d${i}`);
  await assert.rejects(
    watchLocal(tmp.dir, () => undefined, { maxFolders: 10 }),
    (e) => isAppError(e) && e.code === 'unsupported' && /more than 10 folders/.test(String(e.params.reason)),
  );
  tmp.cleanup();
});

test('a folder made or moved in is watched and its contents reported; a removal and a move out are reported', async () => {
  const tmp = tempDir('filedock-local-watch-');
  const root = `${tmp.dir}/root`;
  mkdirSync(`${root}/old`, { recursive: true });
  mkdirSync(`${tmp.dir}/outside/deep`, { recursive: true });
  writeFileSync(`${tmp.dir}/outside/deep/x.txt`, 'x');
  writeFileSync(`${root}/old/gone.txt`, 'g');
  const seen = new Set<string>();
  const stop = await watchLocal(root, (paths) => paths.forEach((p) => seen.add(p)), { debounceMs: 20 });
  const until = async (p: string) => {
    for (const end = Date.now() + 5000; !seen.has(p) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
    assert.ok(seen.has(p), `${p} reported (seen: ${[...seen].join(', ')})`);
  };
  try {
    // Moved in with contents written before any watch could exist there.
    renameSync(`${tmp.dir}/outside`, `${root}/moved`);
    await until('moved');
    await until('moved/deep/x.txt');
    // Its folders are watched now: a later write deep inside is reported.
    writeFileSync(`${root}/moved/deep/later.txt`, 'l');
    await until('moved/deep/later.txt');
    mkdirSync(`${root}/made/a`, { recursive: true });
    writeFileSync(`${root}/made/a/new.txt`, 'n');
    await until('made/a/new.txt');
    rmSync(`${root}/old/gone.txt`);
    await until('old/gone.txt');
    seen.clear();
    renameSync(`${root}/moved`, `${tmp.dir}/away`);
    await until('moved');
    // The moved-out folder's watches are gone: writes there are not reported as if inside.
    writeFileSync(`${tmp.dir}/away/deep/after.txt`, 'a');
    writeFileSync(`${root}/made/a/tick.txt`, 't');
    await until('made/a/tick.txt');
    assert.deepEqual(
      [...seen].filter((p) => p.includes('after')),
      [],
    );
  } finally {
    stop();
    tmp.cleanup();
  }
});
