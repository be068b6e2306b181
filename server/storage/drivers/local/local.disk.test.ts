import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statfsSync, statSync } from 'node:fs';
import { rootDisk } from './local.disk';
import { LocalRoot } from './local.root';
import { tempDir } from '../../../../test/helpers/tools';

const linux = process.platform === 'linux';

test('a root on a block filesystem may close small reads synchronously; a pseudo or unknown filesystem, or another device below the root, may not', {
  skip: !linux && 'statfs types are Linux',
}, async (t) => {
  const tmp = tempDir('filedock-disk-');
  t.after(() => tmp.cleanup());
  const root = await LocalRoot.open(`${tmp.dir}/root`);
  const dev = statSync(root.real).dev;
  assert.equal(root.disk.dev, dev, 'the root device, read at mount time');
  // /proc is no block filesystem: its kind is not on the list, so its closes stay asynchronous.
  assert.deepEqual(await rootDisk('/proc'), { dev: statSync('/proc').dev, local: false });
  assert.deepEqual(await rootDisk(`${tmp.dir}/missing`), { dev: -1, local: false }, 'unknown means not local');
  // The test machines' temp folders are on ext4, overlayfs or tmpfs.
  assert.equal(root.disk.local, true, `temp folder on statfs type ${statfsSync(root.real).type.toString(16)}`);
  assert.equal(root.quickClose({ dev }), true);
  assert.equal(root.quickClose({ dev: dev + 1 }), false, 'a filesystem mounted below the root keeps the asynchronous close');
});
