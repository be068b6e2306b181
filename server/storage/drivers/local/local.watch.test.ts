/** Watching reports changed relative paths, debounced, and refuses trees too big to watch. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
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
  await assert.rejects(watchLocal(tmp.dir, () => undefined, { maxFolders: 10 }), (e) => isAppError(e) && e.code === 'unsupported' && /more than 10 folders/.test(String(e.params.reason)));
  tmp.cleanup();
});
