/**
 * metered(): each driver call is one counted request of its class (the way
 * drivers that cannot see their wire requests are metered), optional
 * capabilities stay as they were, and a self-metered driver is left alone.
 * A real local driver on a temp dir stands in for a remote one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { localDriver } from './drivers/local';
import { metered, type RequestClass } from './meter';
import type { StorageDriver } from './types';

test('metered() counts each call by class and keeps the capabilities', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'filedock-meter-'));
  try {
    const raw = await localDriver.create({ path: join(dir, 'root') }, { stateDir: dir, uid: 'm' });
    const counts: Record<RequestClass, number> = { list: 0, head: 0, get: 0, put: 0 };
    const d = metered(raw, (c) => counts[c]++);
    await d.mkdir('a');
    await d.write('a/x.txt', Readable.from(['hello']));
    assert.equal((await d.stat('a/x.txt')).size, 5);
    assert.equal(await text(await d.read('a/x.txt')), 'hello');
    const names = [];
    for await (const e of d.list('a')) names.push(e.name);
    assert.deepEqual(names, ['x.txt']);
    for await (const _ of d.walk!('')) void _;
    await d.move!('a/x.txt', 'a/y.txt', { overwrite: false });
    await d.delete('a/y.txt');
    assert.deepEqual(counts, { list: 2, head: 1, get: 1, put: 4 });
    for (const k of ['walk', 'move', 'copy', 'multipart', 'watch', 'localPath', 'statLocal', 'presignGet'] as const)
      assert.equal(k in d, k in raw && raw[k] !== undefined, k);
    const self: StorageDriver = Object.assign(Object.create(raw), { selfMetered: true });
    assert.equal(
      metered(self, () => assert.fail('counted twice')),
      self,
    );
    await raw.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
